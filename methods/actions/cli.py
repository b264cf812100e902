"""``neurips26 actions train|eval|compare|codecs|freeact``: robot action learning on the PushT demonstrations.

Registered in ``neurips26.cli`` as a sub-app: ``app.add_typer(actions, name="actions")``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from neurips26 import hubfolder
from neurips26.errors import UserError
from neurips26.models import device as choose_device
from neurips26.options import DataOpt, DeviceOpt, out_option, resource_folder
from neurips26.output import progress

from . import data as demos_data
from .codecs import chunks_of, codec_table
from .protocol import STANDARD

actions = typer.Typer(help="Robot actions on PushT: codecs, BC / flow matching / FAFM policies, simulator rollouts, "
                           "FreeAct latent actions.", no_args_is_help=True, add_completion=False)
MIXED = "mixed"  # model-name suffix of a policy trained on 5, 10 and 20 Hz demonstrations


def _rates(text: str) -> tuple[float, ...]:
    try:
        rates = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UserError(f"--rates {text!r}: comma-separated rates in Hz, e.g. 5,10,20") from None
    bad = [r for r in rates if r not in (5.0, 10.0, 20.0)]
    if not rates or bad:
        raise UserError(f"--rates {text!r}: the built folder holds 5, 10 and 20 Hz")
    return rates


@actions.command()
def train(
    data: DataOpt = None,
    out: Annotated[Path, out_option("Folder for <method>.pt (and <method>@mixed.pt) and training.json.")]
    = Path("actions-models"),
    methods: Annotated[str, typer.Option(help="Comma-separated: bc, flow_raw, fafm.")] = "bc,flow_raw,fafm",
    rates: Annotated[str, typer.Option(help="Training rates in Hz: 10 (standard) or a mix such as 5,10,20 "
                                            "(saved as <method>@mixed.pt).")] = "10",
    steps: Annotated[int, typer.Option(min=1, help="Gradient steps per method.")] = 3000,
    batch_size: Annotated[int, typer.Option(min=2)] = 256,
    episodes: Annotated[int | None, typer.Option(help="Train on the first N training episodes only.")] = None,
    observation: Annotated[str, typer.Option(help="state or keypoints.")] = "state",
    coefficients: Annotated[int, typer.Option(min=1, help="FAFM: DCT coefficients K.")] = 8,
    sobolev: Annotated[float, typer.Option(min=0, help="FAFM: weight of the first-derivative penalty.")] = 0.1,
    seed: int = 0,
    device: DeviceOpt = None,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads for torch (1 is fastest for these MLPs).")] = 1,
) -> None:
    """Train each method on the training demonstrations; print and save the training cost."""
    from .train import METHODS  # lazy: torch, only when a command runs
    from .train import save as save_policy  # lazy: as above
    from .train import train as train_policy  # lazy: as above

    wanted = [m.strip() for m in methods.split(",") if m.strip()]
    unknown = [m for m in wanted if m not in METHODS]
    if unknown or not wanted:
        raise UserError(f"--methods: unknown {', '.join(unknown) or '(none)'}; use {', '.join(METHODS)}")
    rate_list = _rates(rates)
    data = resource_folder(data, "pusht")
    demos = demos_data.load(data, "train", rate_list, episodes)
    provenance = hubfolder.provenance(data, "pusht", "episodes" if rate_list == (10.0,) else "mixed_frequency")
    suffix = "" if rate_list == (10.0,) else f"@{MIXED}"
    where, costs = choose_device(device), []
    with progress(transient=False) as bars:
        for method in wanted:
            options = {"coefficients": coefficients, "sobolev": sobolev} if method == "fafm" else {}
            policy, cost = train_policy(method, demos, steps=steps, batch_size=batch_size, seed=seed, device=where,
                                        threads=threads, observation=observation,
                                        advance=bars.steps(method + suffix, steps), **options)
            save_policy(policy, out / f"{method}{suffix}.pt", cost=cost.as_dict(), data=provenance,
                        rates=list(rate_list), episodes=len({d.episode_index for d in demos}))
            costs.append(cost.as_dict() | {"model": method + suffix})
    log = out / "training.json"
    previous = json.loads(log.read_text()) if log.is_file() else []
    log.write_text(json.dumps([c for c in previous if c["model"] not in {x["model"] for x in costs}] + costs,
                              indent=1))
    for c in costs:
        print(f"{c['model']:16} {c['steps']:6d} steps {c['examples']:7d} examples {c['seconds']:8.1f} s "
              f"peak {c['peak_memory_mb']:7.1f} MB  loss {c['final_loss']:.4f}  ({c['device']})")
    print(f"models in {out}/; next: neurips26 actions eval --models {out}")


@actions.command("eval")
def eval_(
    models: Annotated[Path, typer.Option(help="The folder `neurips26 actions train` wrote.")] = Path("actions-models"),
    out: Annotated[Path, out_option("Folder for the runs (lm-eval results + samples) and summary.json.")]
    = Path("actions-eval"),
    rates: Annotated[str, typer.Option(help="Control rates to roll out at (Hz); the standard run is 10.")] = "10",
    episodes: Annotated[int, typer.Option(min=1, help="Seeds per run (the standard run: 50).")]
    = STANDARD["episodes"],
    max_seconds: Annotated[float, typer.Option(min=1, help="Rollout time limit (the standard run: 30 s).")]
    = STANDARD["max_seconds"],
    only: Annotated[str | None, typer.Option(help="Comma-separated model names (file stems) to evaluate.")] = None,
    device: DeviceOpt = None,
) -> None:
    """Roll every saved policy out in the simulator from the fixed seeds at each rate; write each run as lm-eval
    results + samples (task pusht_rollout, ranked on the leaderboard's robot_actions board when standard)."""
    from .evaluate import rollouts, seeds, summary  # lazy: torch and the simulator, only when a command runs
    from .report import table, write_run  # lazy: as above
    from .train import load  # lazy: as above

    names = {n.strip() for n in only.split(",")} if only else None
    paths = [p for p in sorted(models.glob("*.pt")) if names is None or p.stem in names]
    if not paths:
        raise UserError(f"{models}: no policies (*.pt{' matching --only' if names else ''}); run neurips26 actions "
                        "train first")
    where, rate_list, rows = choose_device(device), _rates(rates), []
    seed_list = seeds(episodes)
    with progress() as bars:
        for path in paths:
            policy, info = load(path, where)
            for rate in rate_list:
                label = f"{path.stem} @ {rate:g} Hz"
                step = bars.steps(label, round(max_seconds * rate))
                runs = rollouts(policy, seed_list, rate, max_seconds, advance=lambda n, _done, step=step: step(n))
                settings = {"rate_hz": rate, "episodes": episodes, "first_seed": seed_list[0],
                            "max_seconds": max_seconds}
                write_run(out / path.stem / f"{rate:g}hz", runs, model_name=f"pusht-{path.stem}",
                          model_args={"path": str(path), **policy.checkpoint()["config"]},
                          data=info.get("data", {}), settings=settings, extra={"device": where})
                rows.append({"method": path.stem, "rate_hz": rate, "n": len(runs), **summary(runs),
                             "training": info.get("cost", {})})
                bars.remove(label)
    log = out / "summary.json"
    previous = json.loads(log.read_text()) if log.is_file() else []
    keys = {(r["method"], r["rate_hz"]) for r in rows}
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps([r for r in previous if (r["method"], r["rate_hz"]) not in keys] + rows, indent=1))
    print(table(rows))
    print(f"runs in {out}/<model>/<rate>hz/; summary: {log}; next: neurips26 actions compare --eval {out}")


@actions.command()
def compare(
    eval_dir: Annotated[Path, typer.Option("--eval", help="The folder `neurips26 actions eval` wrote.")]
    = Path("actions-eval"),
    plot_path: Annotated[Path | None, typer.Option("--plot", help="Where to write the plot (default: in --eval).")]
    = None,
) -> None:
    """The comparison table (success with its 95% interval, coverage, smoothness), the mixed-frequency drop of
    each method (its 10 Hz policy at 10 Hz against its mixed-rate policy averaged over rates) and the plot."""
    from .report import plot, table  # lazy: matplotlib, only when plotting

    log = eval_dir / "summary.json"
    if not log.is_file():
        raise UserError(f"{log}: not found; run neurips26 actions eval --out {eval_dir} first")
    rows = sorted(json.loads(log.read_text()), key=lambda r: (r["method"], r["rate_hz"]))
    print(table(rows))
    standard = {r["method"]: r for r in rows if r["rate_hz"] == 10.0 and "@" not in r["method"]}
    for method, row in standard.items():
        mixed = [r for r in rows if r["method"] == f"{method}@{MIXED}"]
        if mixed:
            mean = sum(r["max_coverage"] for r in mixed) / len(mixed)
            rates = ", ".join(f"{r['rate_hz']:g} Hz {r['max_coverage']:.3f}" for r in mixed)
            print(f"mixed-frequency drop {method}: {row['max_coverage'] - mean:+.3f} coverage ({rates})")
    figure = plot(rows, plot_path or eval_dir / "actions.png")
    print(f"plot: {figure}")


@actions.command()
def codecs(
    data: DataOpt = None,
    steps: Annotated[int, typer.Option(min=2, help="Chunk length (samples at 10 Hz).")] = 16,
) -> None:
    """Round-trip error of every action codec (raw, binning, DCT at each K, FAST-style) on the demonstrations."""
    folder = resource_folder(data, "pusht")
    trajectories = [d.action for split in ("train", "test") for d in demos_data.load(folder, split)]
    chunks = chunks_of(trajectories, steps)
    print(f"{len(chunks)} chunks of {steps} steps (pixels; numbers = values or non-zero tokens per chunk)")
    print(f"{'codec':8} {'setting':10} {'numbers':>8} {'RMSE px':>9}")
    for row in codec_table(chunks):
        print(f"{row['codec']:8} {row['setting']:10} {row['numbers']:8.1f} {row['rmse']:9.4f}")


@actions.command()
def freeact(
    data: DataOpt = None,
    out: Annotated[Path, out_option("Folder for freeact.pt and freeact.json.")] = Path("actions-freeact"),
    episodes: Annotated[int, typer.Option(min=1, help="Training episodes (frames decoded into memory).")] = 40,
    test_episodes: Annotated[int, typer.Option(min=1, help="Held-out episodes to evaluate and pseudo-label.")] = 29,
    steps: Annotated[int, typer.Option(min=1, help="Training steps.")] = 1500,
    codes: Annotated[int, typer.Option(min=2, help="Codebook size.")] = 16,
    batch_size: Annotated[int, typer.Option(min=2)] = 64,
    gap: Annotated[int, typer.Option(min=1, help="Frames between the two of a pair (1 = 0.1 s).")] = 1,
    align: Annotated[float, typer.Option(min=0, help="Weight of the alignment with end-effector motion "
                                                     "(0: frames only).")] = 1.0,
    seed: int = 0,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads for torch.")] = 1,
) -> None:
    """Train FreeAct's latent-action model on demonstration frames (no actions), then report codebook usage, the
    next-frame error, a linear probe of the true motion from the codes and the pseudo-labelling error."""
    import torch

    from . import freeact as fa  # lazy: torch, only when a command runs

    data = resource_folder(data, "pusht")
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    train_clips = fa.load_clips(data, "train", episodes, gap)
    test_clips = fa.load_clips(data, "test", test_episodes, gap)
    model = fa.LatentActionModel(codes=codes)
    with progress(transient=False) as bars:
        cost = fa.train(model, train_clips, steps, batch_size, seed=seed, align=align,
                        advance=bars.steps("FreeAct", steps))
    report = fa.evaluate(model, train_clips, test_clips, cost["seconds"])
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "codes": codes}, out / "freeact.pt")
    payload = {**report.as_dict(), "train_pairs": len(train_clips.now), "cost": cost, "gap": gap, "align": align,
               "data": hubfolder.provenance(data, "pusht", "frames")}
    (out / "freeact.json").write_text(json.dumps(payload, indent=1))
    for key, value in report.as_dict().items():
        print(f"{key:22} {value:.4g}" if isinstance(value, float) else f"{key:22} {value}")
    print(f"report: {out / 'freeact.json'}")
