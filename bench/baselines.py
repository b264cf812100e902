"""Reference answerers on every task: each score beside its baseline and the baseline's 95% interval.

Builds the text resources from their embedded samples and small generated TAR/CLoVR releases into a
temporary folder (or uses ``--data``), runs the ``constant`` (first, majority, empty) and ``random``
answerers through lm-eval on every task's full test split, and prints one row per (task, answerer)::

    python bench/baselines.py                       # all tasks
    python bench/baselines.py --tasks locus_topic   # some
    NEURIPS26_LOCUS_GOLD=../shared/data/locus-gold python bench/baselines.py   # with the gold LOCUS tasks
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from neurips26.corpora import RESOURCES
from neurips26.corpora.clovr import build as clovr_build
from neurips26.corpora.clovr import generate as clovr_generate
from neurips26.corpora.tar import build as tar_build
from neurips26.corpora.tar import generate as tar_generate
from neurips26.tasks import baselines

from neurips26 import settings


def build(root: Path, sets: int, videos: int) -> None:
    """LOCUS and RoleBench-Unlearn from their embedded samples; generated TAR and CLoVR releases."""
    gold = settings.locus_gold_dir()
    RESOURCES.get("locus")(out=root / "locus", gold=gold if (gold / "dev.jsonl").is_file() else None)
    RESOURCES.get("rolebench_unlearn")(out=root / "rolebench_unlearn")
    tar_generate.generate(root / "raw" / "tar", seed=0, n_videos=videos, test_videos=videos, duration=8.0)
    clovr_generate.generate(root / "raw" / "clovr", seed=0, n_sets=sets, videos_per_set=3, duration=20.0)
    tar_build.build(raw=root / "raw" / "tar", out=root / "tar")
    clovr_build.build(raw=root / "raw" / "clovr", out=root / "clovr")


def all_tasks() -> list[str]:
    tasks = sorted(baselines.task_configs())
    if not (settings.locus_gold_dir() / "dev.jsonl").is_file():
        tasks = [t for t in tasks if not t.endswith("_gold")]
    return tasks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task names (default: every task)")
    parser.add_argument("--data", type=Path, help="a folder of built datasets (default: build into a temp folder)")
    parser.add_argument("--sets", type=int, default=4, help="CLoVR sets to generate (3 videos each)")
    parser.add_argument("--videos", type=int, default=8, help="TAR test videos to generate")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data or Path(tmp)
        if args.data is None:
            build(root, args.sets, args.videos)
        os.environ["NEURIPS26_DATA"] = str(root.resolve())
        tasks = args.tasks.split(",") if args.tasks else all_tasks()
        runs = {}
        for model, model_args in baselines.ANSWERERS:
            start = time.perf_counter()
            runs[model, model_args] = baselines.evaluate(model, model_args, tasks)
            print(f"{model}({model_args}): {time.perf_counter() - start:.1f} s", file=sys.stderr)
        found = baselines.rows(runs)
    print(baselines.table(found))
    return 0 if all(r.ok for r in found) else 1


if __name__ == "__main__":
    sys.exit(main())
