"""Label-shift weight intervals on real data: LP region (ours) vs interval Gaussian elimination.

Prints coverage of the true weights, interval width, PAC prediction-set size and error and runtime for
scikit-learn's digits (K = 10), wine (K = 3) and breast cancer (K = 2) under Dirichlet and tweak-one
shift, then runtime up to K = 100 on synthetic confusion matrices; saves a figure.

    python bench/labelshift.py                  # 200 repetitions per dataset and shift
    python bench/labelshift.py --reps 20 --runtime-ks 10,50
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
from neurips26.methods.labelshift import EmptyRegionError, confidence_boxes, gaussian_elimination, lp_region
from neurips26.methods.labelshift.experiment import DATASETS, SHIFTS, Config, population, run, summarize, synthetic
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


def runtime_rows(ks: list[int], reps: int, joint_max_k: int, seed: int, advance) -> list[dict]:
    """Seconds per call of each interval method on synthetic counts (n = m = 500 K)."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in ks:
        times = {"ge": [], "lp": [], "lp-joint": []}
        widths = {"ge": [], "lp": []}
        covered = bounded = 0
        for _ in range(reps):
            counts, _, w = synthetic(k, 500 * k, 500 * k, 0.8, rng)
            while (counts.joint.sum(axis=0) == 0).any():
                counts, _, w = synthetic(k, 500 * k, 500 * k, 0.8, rng)
            start = time.perf_counter()
            boxes = confidence_boxes(counts, 0.05)
            box_s = time.perf_counter() - start
            ge = gaussian_elimination(boxes)
            times["ge"].append(box_s + ge.seconds)
            bounded += bool(np.isfinite(ge.hi).all())
            try:
                lp = lp_region(boxes, "compact")
            except EmptyRegionError:
                advance()
                continue
            times["lp"].append(box_s + lp.seconds)
            widths["ge"].append(ge.width.mean())
            widths["lp"].append(lp.width.mean())
            covered += bool(lp.contains(w).all())
            if k <= joint_max_k:
                times["lp-joint"].append(box_s + lp_region(boxes, "joint").seconds)
            advance()
        rows.append(dict(K=k, n=500 * k, reps=reps, **{f"{name}_s": float(np.mean(v)) if v else np.nan
                                                        for name, v in times.items()},
                         ge_width=float(np.mean(widths["ge"])), lp_width=float(np.mean(widths["lp"])),
                         lp_coverage=covered / reps, ge_bounded=bounded / reps))
    return rows


def fmt(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.{digits}f}"


def print_tables(console: Console, rows: list[dict], rt: list[dict], cfg: Config) -> None:
    table = Table(title=f"Label-shift weight intervals and PAC sets (delta={cfg.delta}, epsilon={cfg.epsilon}, "
                        f"delta_sets={cfg.delta_sets}; n_source={cfg.n_source}, n_cal={cfg.n_calibration}, "
                        f"n_target={cfg.n_target})")
    for col in ("dataset", "shift", "K", "method", "reps", "cover all", "cover class", "bounded", "mean width",
                "LP/GE", "PAC size", "PAC error", "P(err>eps)", "ms"):
        table.add_column(col, justify="left" if col in ("dataset", "shift", "method") else "right", no_wrap=True)
    for r in rows:
        table.add_row(r["dataset"], r["shift"], str(r["K"]), r["method"], str(r["reps"]),
                      fmt(r.get("coverage_all")), fmt(r.get("coverage_class")), fmt(r.get("bounded"), 2),
                      fmt(r.get("width")),
                      fmt(r.get("width_ratio")), fmt(r["ps_size"]), fmt(r["ps_error"], 4), fmt(r["ps_violations"]),
                      fmt(r["seconds"] * 1000, 1) if "seconds" in r else "—")
    console.print(table)
    console.print("cover all: all K true weights inside their intervals (guarantee >= 1 - delta); bounded: "
                  "share of repetitions with every interval finite; PAC error: "
                  "exact target error of the set, guarantee P(err > eps) <= delta + delta_sets (oracle: true w, "
                  "<= delta_sets); conformal: weighted split conformal with BBSE weights (marginal, not PAC).")
    runtime = Table(title="Runtime on synthetic confusion matrices (n = m = 500 K, accuracy 0.8, delta = 0.05)")
    for col in ("K", "reps", "GE ms", "LP ms", "LP joint ms", "GE bounded", "GE width", "LP width", "LP coverage"):
        runtime.add_column(col, justify="right")
    for r in rt:
        runtime.add_row(str(r["K"]), str(r["reps"]), fmt(r["ge_s"] * 1000, 1), fmt(r["lp_s"] * 1000, 1),
                        fmt(r["lp-joint_s"] * 1000, 1), fmt(r["ge_bounded"], 2), fmt(r["ge_width"]),
                        fmt(r["lp_width"]), fmt(r["lp_coverage"]))
    console.print(runtime)


def plot(path: Path, records: list[dict], rows: list[dict], rt: list[dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(12, 9))
    # (a) per-class widths on digits
    ge = np.concatenate([r["widths"] for r in records if r["method"] == "ge" and r["dataset"] == "digits"
                         and "widths" in r] or [np.zeros(0)])
    lp = np.concatenate([r["widths"] for r in records if r["method"] == "lp" and r["dataset"] == "digits"
                         and "widths" in r] or [np.zeros(0)])
    if len(ge) == len(lp) and len(ge):
        ax[0, 0].scatter(ge, lp, s=4, alpha=0.3)
        top = float(np.nanmax(ge[np.isfinite(ge)])) if np.isfinite(ge).any() else 1.0
        ax[0, 0].plot([0, top], [0, top], "k--", lw=1, label="LP = GE")
        ax[0, 0].legend()
    ax[0, 0].set(xlabel="GE interval width", ylabel="LP interval width", title="(a) digits: per-class widths")
    # (b) mean width and (c) PAC set size per dataset and shift
    groups = list(dict.fromkeys((r["dataset"], r["shift"]) for r in rows))
    x = np.arange(len(groups))
    labels = [f"{d}\n{s}" for d, s in groups]

    def value(group, method, key):
        return next((r.get(key, np.nan) for r in rows if (r["dataset"], r["shift"], r["method"]) == (*group, method)),
                    np.nan)

    for i, method in enumerate(("ge", "lp")):
        ax[0, 1].bar(x + (i - 0.5) * 0.4, [value(g, method, "width") for g in groups], 0.4, label=method.upper())
    ax[0, 1].set(xticks=x, ylabel="mean interval width", title="(b) mean width of the w_k intervals")
    ax[0, 1].set_xticklabels(labels, fontsize=7)
    ax[0, 1].legend()
    for i, method in enumerate(("ge", "lp", "oracle")):
        ax[1, 0].bar(x + (i - 1) * 0.27, [value(g, method, "ps_size") for g in groups], 0.27,
                     label={"oracle": "true w"}.get(method, method.upper()))
    ax[1, 0].set(xticks=x, ylabel="mean PAC set size", title="(c) PAC prediction-set size on the target")
    ax[1, 0].set_xticklabels(labels, fontsize=7)
    ax[1, 0].legend()
    # (d) runtime vs K
    ks = [r["K"] for r in rt]
    for key, label in (("ge_s", "GE"), ("lp_s", "LP (compact, 2K vars)"), ("lp-joint_s", "LP (joint, K^2+2K vars)")):
        ax[1, 1].plot(ks, [r[key] for r in rt], "o-", label=label)
    for r in rt:
        if r["ge_bounded"] < 1:
            ax[1, 1].annotate(f"GE unbounded\n{1 - r['ge_bounded']:.0%} of runs", (r["K"], r["ge_s"]),
                              textcoords="offset points", xytext=(0, 12), ha="center", fontsize=7)
    ax[1, 1].set(xscale="log", yscale="log", xlabel="K", ylabel="seconds per call", title="(d) runtime (synthetic)")
    ax[1, 1].set_xticks(ks, [str(k) for k in ks], minor=False)
    ax[1, 1].minorticks_off()
    ax[1, 1].legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--reps", type=int, default=200, help="repetitions per dataset and shift")
    parser.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated scikit-learn datasets")
    parser.add_argument("--shifts", default=",".join(SHIFTS), help="comma-separated shifts")
    parser.add_argument("--n-source", type=int, default=Config.n_source, help="source examples for the boxes")
    parser.add_argument("--n-calibration", type=int, default=Config.n_calibration, help="source calibration examples")
    parser.add_argument("--n-target", type=int, default=Config.n_target, help="unlabelled target examples")
    parser.add_argument("--delta", type=float, default=Config.delta, help="interval failure probability")
    parser.add_argument("--epsilon", type=float, default=Config.epsilon, help="PAC set error level")
    parser.add_argument("--delta-sets", type=float, default=Config.delta_sets, help="PAC set failure probability")
    parser.add_argument("--runtime-ks", default="10,20,50,100", help="K values for the synthetic runtime table")
    parser.add_argument("--runtime-reps", type=int, default=3, help="instances per K for the runtime table")
    parser.add_argument("--joint-max-k", type=int, default=20, help="largest K for the (slow) joint LP formulation")
    parser.add_argument("--plot", type=Path, default=Path("bench/out/labelshift.png"), help="where to save the figure")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    cfg = Config(n_source=args.n_source, n_calibration=args.n_calibration, n_target=args.n_target,
                 delta=args.delta, epsilon=args.epsilon, delta_sets=args.delta_sets)
    datasets, shifts = args.datasets.split(","), args.shifts.split(",")
    ks = [int(k) for k in args.runtime_ks.split(",") if k]
    console = Console()
    console = Console(width=max(console.width, 160))  # keep the wide tables readable when piped
    start = time.perf_counter()
    records: list[dict] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        for name in datasets:
            pop = population(name, seed=args.seed)
            console.print(f"{name}: K={pop.K}, population {len(pop.labels)} held-out examples, "
                          f"classifier accuracy {pop.accuracy:.3f}")
            for shift in shifts:
                task = progress.add_task(f"{name} / {shift}", total=args.reps)
                records += run(pop, shift, args.reps, cfg, args.seed, lambda t=task: progress.advance(t))
        task = progress.add_task("synthetic runtime", total=len(ks) * args.runtime_reps)
        rt = runtime_rows(ks, args.runtime_reps, args.joint_max_k, args.seed, lambda: progress.advance(task))
    rows = summarize(records, cfg)
    print_tables(console, rows, rt, cfg)
    plot(args.plot, records, rows, rt)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    console.print(f"saved {args.plot}; total {time.perf_counter() - start:.1f} s; peak memory {peak:.0f} MiB")


if __name__ == "__main__":
    main()
