"""The Ray engine: the same folder, byte for byte, as the local build (a local Ray instance with 2 CPUs), on the
real shared sample when present, else on the embedded one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from neurips26.corpora.locus import build as locus
from neurips26.corpora.locus import distributed
from neurips26.corpora.locus.real_sample import link_raw
from neurips26.corpora.locus.records import SAMPLE_DIR

from tests.conftest import SHARED_DATA

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_ray_build_is_byte_identical_to_the_local_build(tmp_path: Path) -> None:
    raw = link_raw(SHARED_DATA / "locus", tmp_path / "raw") if (SHARED_DATA / "locus").is_dir() else SAMPLE_DIR
    local = locus.build(raw=raw, out=tmp_path / "local")
    distributed = locus.build(raw=raw, out=tmp_path / "ray", engine="ray")
    assert distributed.sections == local.sections > 0 and distributed.reconciles()
    a, b = files(tmp_path / "local"), files(tmp_path / "ray")
    assert a.keys() == b.keys()
    assert [name for name in a if a[name] != b[name]] == []  # shards, manifest, card, report: every byte


def test_runs_of_codes_per_task_keep_the_order(tmp_path: Path) -> None:
    """With many small codes a Ray task parses a run of them (32 codes on 2 CPUs: 2 per task); the folder is
    still the local build's, byte for byte."""
    georgia = SHARED_DATA / "locus" / "georgia"
    if not georgia.is_dir():
        pytest.skip(f"the real LOCUS sample is not at {georgia}")
    raw = tmp_path / "raw"
    raw.mkdir()
    lines = ["jurisdiction_id,name,kind,state,counties,source"]
    for i in range(16):
        for name, county in (("arcade", "Jackson County"), ("athens-clarke", "Clarke County")):
            (raw / f"{name}-{i:02d}").symlink_to(georgia / name, target_is_directory=True)
            lines.append(f"{name}-{i:02d},{name},city,GA,{county},shared/data/locus/georgia/{name}")
    (raw / "jurisdictions.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert distributed.codes_per_task(32, 2) == 2
    local = locus.build(raw=raw, out=tmp_path / "local", workers=2)
    on_ray = locus.build(raw=raw, out=tmp_path / "ray", engine="ray", workers=2)
    assert on_ray.sections == local.sections > 0 and on_ray.reconciles()
    a, b = files(tmp_path / "local"), files(tmp_path / "ray")
    assert a.keys() == b.keys()
    assert [name for name in a if a[name] != b[name]] == []


def test_engine_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(locus.BuildError, match="--engine 'spark'"):
        locus.build(out=tmp_path / "x", engine="spark")
    with pytest.raises(locus.BuildError, match="--address needs --engine ray"):
        locus.build(out=tmp_path / "x", address="auto")
