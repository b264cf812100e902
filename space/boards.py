"""The Leaderboard tab: boards read from the store, filters, display columns, the score/size plot.

Nothing here touches Gradio, so the tests call these functions directly; ``tabs.py`` only wires them to components.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa
from neurips26.leaderboard.ranking import OVERALL_DEFINITION, leaderboard, left_out, scope
from neurips26.leaderboard.tables import UNRANKED, VALID
from neurips26.leaderboard.tracks import Track, board_scopes, demo_tracks, track_parts

SCORE = "Score [95% CI]"  # one cell: the score and its interval, so the interval is never scrolled out of view
# Columns a user may hide; Rank, Model, Score and the per-task or per-benchmark score columns always show.
OPTIONAL_COLUMNS = ("Rank range", "± SE", "n", "Params (B)", "Precision", "Type", "License", "Revision",
                    "Submission")
DEFAULT_COLUMNS = ("Rank range", "Params (B)", "Precision", "Type", "License", "Submission")

# ---------------------------------------------------------------- leaderboard


@dataclass(frozen=True)
class Filters:
    """What the Leaderboard tab's controls ask for; ``None`` means "no filter"."""

    search: str = ""
    min_params_b: float | None = None
    max_params_b: float | None = None
    precisions: Collection[str] | None = None
    model_types: Collection[str] | None = None
    licenses: Collection[str] | None = None


def filter_board(board: pl.DataFrame, filters: Filters) -> pl.DataFrame:
    """Rows of a raw leaderboard (``ranking.leaderboard`` columns) that pass ``filters``.

    The search matches any of its ``,``/``;``-separated terms as a case-insensitive
    substring of the model id; the parameter bounds are in billions and inclusive.
    """
    keep = pl.lit(True)
    terms = [t.strip().lower() for t in re.split(r"[,;]", filters.search or "") if t.strip()]
    if terms:
        model = pl.col("model_id").str.to_lowercase()
        keep &= pl.any_horizontal([model.str.contains(t, literal=True) for t in terms])
    if filters.min_params_b is not None:
        keep &= pl.col("params") >= filters.min_params_b * 1e9
    if filters.max_params_b is not None:
        keep &= pl.col("params") <= filters.max_params_b * 1e9
    for column, allowed in (("precision", filters.precisions), ("model_type", filters.model_types),
                            ("license", filters.licenses)):
        if allowed is not None:
            keep &= pl.col(column).is_in(list(allowed))
    return board.filter(keep)


def params_b(params: int | None) -> float | None:
    """Parameter count in billions, three significant digits."""
    return None if params is None else float(f"{params / 1e9:.3g}")


def rank_range(best: int | None, worst: int | None) -> str:
    """``"2"`` or ``"1–4"``: the ranks the confidence intervals allow."""
    if best is None or worst is None:
        return ""
    return str(best) if best == worst else f"{best}–{worst}"


def sig3(value: float | None) -> str:
    """The one number format of the Space: three significant digits, trailing zeros kept (``1.00``, ``0.500``,
    ``0.186``); empty when unknown."""
    if value is None:
        return ""
    text = f"{value:#.3g}"
    return text.rstrip(".") if "e" not in text else f"{value:.2e}"


def interval(low: float | None, high: float | None) -> str:
    """``"[0.512, 0.634]"``, or empty when unknown."""
    if low is None or high is None:
        return ""
    return f"[{sig3(low)}, {sig3(high)}]"


def score_cell(score: float | None, low: float | None, high: float | None) -> str:
    """``"0.621 [0.552, 0.690]"``: a score with its 95% interval beside it."""
    return f"{sig3(score)} {interval(low, high)}".strip()


def format_board(board: pl.DataFrame, part_scores: dict[str, pl.DataFrame] | None = None) -> pl.DataFrame:
    """Display columns of a raw leaderboard, ordered by rank; numbers in one format (:func:`sig3`).

    ``part_scores`` (a task or benchmark -> its raw leaderboard) adds one score column per
    part after the score, joined on the submission.
    """
    rows = board.sort("rank", "model_id").to_dicts()
    columns: dict[str, tuple[pl.DataType, list[Any]]] = {
        "Rank": (pl.Int64, [r["rank"] for r in rows]),
        "Rank range": (pl.String, [rank_range(r["rank_best"], r["rank_worst"]) for r in rows]),
        "Model": (pl.String, [r["model_id"] for r in rows]),
        SCORE: (pl.String, [score_cell(r["score"], r["ci_low"], r["ci_high"]) for r in rows]),
    }
    for part, scores in (part_scores or {}).items():
        by_id = dict(zip(scores["submission_id"].to_list(), scores["score"].to_list(), strict=True))
        columns[part] = (pl.String, [sig3(by_id.get(r["submission_id"])) for r in rows])
    columns |= {
        "± SE": (pl.String, [sig3(r["stderr"]) for r in rows]),
        "n": (pl.Int64, [r["n"] for r in rows]),
        "Params (B)": (pl.Float64, [params_b(r["params"]) for r in rows]),
        "Precision": (pl.String, [r["precision"] for r in rows]),
        "Type": (pl.String, [r["model_type"] for r in rows]),
        "License": (pl.String, [r["license"] for r in rows]),
        "Revision": (pl.String, [(r["revision"] or "")[:7] for r in rows]),
        "Submission": (pl.Int64, [r["submission_id"] for r in rows]),
    }
    return pl.DataFrame([pl.Series(name, values, dtype=dtype) for name, (dtype, values) in columns.items()])


def select_columns(frame: pl.DataFrame, chosen: Iterable[str]) -> pl.DataFrame:
    """``frame`` without the optional columns that are not ``chosen`` (the order stays the frame's)."""
    chosen = set(chosen)
    return frame.select([c for c in frame.columns if c not in OPTIONAL_COLUMNS or c in chosen])


def column_types(frame: pl.DataFrame) -> list[str]:
    """Gradio Dataframe datatypes: numbers for numeric columns, plain text for everything else."""
    return ["number" if frame.schema[c].is_numeric() else "str" for c in frame.columns]


def score_plot(board: pl.DataFrame, title: str) -> Any:
    """Matplotlib figure of score against parameter count (log scale), with the CIs as error bars.

    Labels never overlap: they stand in a column right of the axes, in score order, at least a line apart, each
    joined to its point by a thin line.
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    points = board.filter(pl.col("params").is_not_null() & (pl.col("params") > 0) & pl.col("score").is_not_null())
    shown = points.sort("score", descending=True).head(MAX_LABELS).to_dicts()
    height = max(3.2, 0.2 * len(shown) + 1.2)
    fig = Figure(figsize=(9, height))
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.08, right=0.76, bottom=0.55 / height, top=1 - 0.35 / height)  # labels: the right
    if points.is_empty():
        ax.text(0.5, 0.5, "No submissions to plot", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    for model_type, group in points.group_by("model_type", maintain_order=True):
        rows = group.to_dicts()
        x = [r["params"] for r in rows]
        y = [r["score"] for r in rows]
        low = [max(0.0, r["score"] - r["ci_low"]) if r["ci_low"] is not None else 0.0 for r in rows]
        high = [max(0.0, r["ci_high"] - r["score"]) if r["ci_high"] is not None else 0.0 for r in rows]
        ax.errorbar(x, y, yerr=[low, high], fmt="o", capsize=3, label=str(model_type[0]))
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_ylabel("score")
    ax.set_title(_plain(title))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, title="model type", title_fontsize=8, loc="upper left")
    bottom, top = ax.get_ylim()  # autoscaled to the points and error bars
    wanted = [(r["score"] - bottom) / ((top - bottom) or 1.0) for r in shown]
    for row, y in zip(shown, label_heights(wanted, gap=1.0 / max(len(shown) + 1, 12)), strict=True):
        name = row["model_id"].rsplit("/", 1)[-1]
        name = name if len(name) <= LABEL_CHARS else name[:LABEL_CHARS - 1] + "…"
        ax.annotate(_plain(name), (row["params"], row["score"]), fontsize=7,
                    xytext=(1.02, y), textcoords="axes fraction", va="center", annotation_clip=False,
                    arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "0.6"})
    return fig


MAX_LABELS = 30  # models named in the plot (the best scores); the rest are points only
LABEL_CHARS = 32  # a longer model name is cut with an ellipsis, so its label stays inside the figure


def label_heights(wanted: list[float], gap: float) -> list[float]:
    """Label heights (axes fraction, ``wanted`` in descending order) moved apart to at least ``gap`` from each
    other and kept within [0, 1]: each is pushed below its upper neighbour, then the column is shifted up
    if it ran below 0."""
    placed: list[float] = []
    for y in wanted:
        y = min(max(y, 0.0), 1.0)
        placed.append(min(y, placed[-1] - gap) if placed else y)
    if placed and placed[-1] < 0:
        placed = [y - placed[-1] for y in placed]
    return placed


def _plain(text: str) -> str:
    """Text matplotlib shows literally (``$`` would start mathtext)."""
    return text.replace("$", r"\$")


# ---------------------------------------------------------------- store


BOARD_SCHEMA: dict[str, pl.DataType] = {
    "model_id": pl.String(), "revision": pl.String(), "precision": pl.String(), "params": pl.Int64(),
    "license": pl.String(), "model_type": pl.String(), "submission_id": pl.Int64(), "score": pl.Float64(),
    "stderr": pl.Float64(), "ci_low": pl.Float64(), "ci_high": pl.Float64(), "rank": pl.Int64(),
    "rank_best": pl.Int64(), "rank_worst": pl.Int64(), "n": pl.Int64(),
}


def empty_board() -> pl.DataFrame:
    """A leaderboard with no rows."""
    return pl.DataFrame(schema=BOARD_SCHEMA)


def board_frame(table: pa.Table) -> pl.DataFrame:
    """A ``ranking.leaderboard`` table as polars, with the column types the formatting expects."""
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.cast({c: t for c, t in BOARD_SCHEMA.items() if c in frame.columns}) if frame.width else empty_board()


def task_groups(specs: dict[str, Any]) -> dict[str, list[str]]:
    """Benchmark (resource group) -> its tasks, both sorted."""
    groups: dict[str, list[str]] = {}
    for name, spec in sorted(specs.items()):
        groups.setdefault(spec.group, []).append(name)
    return dict(sorted(groups.items()))


DEMO = "demo:"  # prefix of a demo-view board's name: the same board over UNRANKED submissions


def board_names(track_list: list[Track]) -> list[str]:
    """Every board of the tracks: each track's overall, then its parts."""
    return list(board_scopes(track_list))


def load_boards(store: Any, track_list: list[Track], tasks: Iterable[str] = ()
                ) -> tuple[dict[str, pl.DataFrame], list[str]]:
    """Raw leaderboards by name (each track's overall and parts, each of ``tasks``; and the same boards of the lm-eval
    tracks over UNRANKED runs, named ``demo:<board>``), and why any of them could not be ranked."""
    scopes = board_scopes(track_list) | {task: {"task": task} for task in tasks}
    demo = board_scopes(demo_tracks(track_list))
    boards, problems = {}, []
    for prefix, where_by_name, status in (("", scopes, VALID), (DEMO, demo, UNRANKED)):
        scores = store.scores(status=status)
        for name, where in where_by_name.items():
            try:
                boards[prefix + name] = board_frame(leaderboard(store, scores=scores, **where))
            except ValueError as exc:
                boards[prefix + name] = empty_board()
                problems.append(f"{prefix}{name}: {exc}")
    return boards, problems


@dataclass(frozen=True)
class BoardView:
    """One board tab: its boards to choose from (``demo``: the same boards over UNRANKED runs)."""

    key: str
    label: str
    choices: list[str]
    demo: bool = False

    @property
    def table_label(self) -> str:
        return "Demo runs: not ranked" if self.demo else f"{self.label} leaderboard"

    def board(self, picked: str | None) -> str:
        """The name of the loaded board that ``picked`` (a choice of this tab) shows."""
        return f"{DEMO}{picked}" if self.demo else picked or ""


def board_views(track_list: list[Track], tasks: list[str]) -> list[BoardView]:
    """The board tabs: one per lm-eval track, one for every method family, Per task, then Demo runs."""
    views = [BoardView(t.name, t.label, [t.board, *t.parts]) for t in track_list if not t.family]
    families = [t.board for t in track_list if t.family]
    if families:
        views.append(BoardView("methods", "Methods", families))
    demo = [name for t in demo_tracks(track_list) for name in (t.board, *t.parts)]
    return [*views, BoardView("task", "Per task", tasks), BoardView("demo", "Demo runs", demo, demo=True)]


def board_parts(track_list: list[Track], store: Any, groups: dict[str, list[str]]) -> dict[str, list[str]]:
    """Board -> the boards shown as its score columns: a track's overall has its ranked parts, a group its tasks
    (the demo boards: the parts' demo boards)."""
    out: dict[str, list[str]] = {}
    for track in track_list:
        out[track.board] = track_parts(track, store.tasks, store.groups) or groups.get(track.group, [])
        out[f"{DEMO}{track.board}"] = [f"{DEMO}{p}" for p in track_parts(track, store.tasks, store.groups)]
        out |= {part: groups.get(part, []) for part in track.parts}
    return out


def demo_view(frame: pl.DataFrame) -> pl.DataFrame:
    """A formatted board of UNRANKED runs: ordered by score, with no rank columns (they are not ranked)."""
    return frame.drop([c for c in ("Rank", "Rank range") if c in frame.columns])


class BoardCache:
    """:func:`load_boards`, computed again after :meth:`clear` (a submission) or once ``ttl`` seconds have passed
    (submissions made elsewhere, e.g. with ``neurips26 submit``)."""

    def __init__(self, store: Any, track_list: list[Track], tasks: Iterable[str] = (), ttl: float = 60.0):
        self.store, self.tracks, self.tasks, self.ttl = store, track_list, list(tasks), ttl
        self._lock = threading.Lock()
        self._value: tuple[dict[str, pl.DataFrame], list[str]] | None = None
        self._at = 0.0

    def get(self) -> tuple[dict[str, pl.DataFrame], list[str]]:
        with self._lock:
            if self._value is None or time.monotonic() - self._at > self.ttl:
                self._value = load_boards(self.store, self.tracks, self.tasks)
                self._at = time.monotonic()
            return self._value

    def clear(self) -> None:
        with self._lock:
            self._value = None


def constant(value: Any) -> Callable[[], Any]:
    """A function of no arguments that returns ``value`` (an event handler that sets a state)."""
    return lambda: value


def most_submitted(boards: dict[str, pl.DataFrame], tasks: list[str]) -> str | None:
    """The task whose board has the most submissions (the first task on a tie, or when all are empty)."""
    return max(tasks, key=lambda t: (boards.get(t, empty_board()).height, -tasks.index(t)), default=None)


def licenses_of(boards: dict[str, pl.DataFrame]) -> list[str]:
    """Every license on the leaderboards, sorted."""
    return sorted({lic for board in boards.values() for lic in board["license"].to_list() if lic})


def submission_of_row(row: dict[str, Any], board: pl.DataFrame) -> int | None:
    """The submission a clicked table row shows: its Submission cell, else the best-ranked match of its cells."""
    if row.get("Submission") not in (None, ""):
        return int(row["Submission"])
    matches = board.filter(pl.col("model_id") == row.get("Model"))
    if row.get("Revision"):
        matches = matches.filter(pl.col("revision").str.starts_with(str(row["Revision"])))
    if row.get("Precision"):
        matches = matches.filter(pl.col("precision") == row["Precision"])
    return None if matches.is_empty() else matches.sort("rank")["submission_id"][0]




def overall_text(store: Any, track_list: list[Track]) -> str:
    """How each track's overall is defined, and which of its tasks it leaves out and why (shown under the boards)."""
    lines = [f"**A track's overall**: {OVERALL_DEFINITION}."]
    for track in track_list:
        names = scope(store.tasks, group=track.group, groups=store.groups)
        lines.append(f"- **{track.board}**: {', '.join(f'`{n}`' for n in names)}")
        lines += [f"  - `{task}` is not in its mean: {why}"
                  for task, why in sorted(left_out(store.tasks, names, track.group).items())]
    return "\n".join(lines)


def protocol_text(store: Any, task: str | None) -> str:
    """How ``task`` is ranked, in words: its protocol (or why it has none)."""
    spec = store.tasks.get(task) if task else None
    if spec is None:
        return ""
    p = spec.protocol
    if p is None:
        return f"`{task}` is not ranked: {spec.problem}"
    shots = f"{p.num_fewshot}-shot" + (f" from {p.fewshot_split}" if p.num_fewshot and p.fewshot_split else "")
    baseline = p.baseline if isinstance(p.baseline, str) else f"{p.baseline:g}"
    return (f"`{task}` v{spec.version:g}: ranked by **{p.metric}** ({'higher' if p.higher_is_better else 'lower'} "
            f"is better, range [{p.range[0]:g}, {p.range[1]:g}]) on the {p.split} split in full, {shots}, chat "
            f"template {'applied' if p.chat_template else 'not applied'}"
            + (f", task settings {p.task_metadata}" if p.task_metadata else "")
            + f"; baseline {baseline} (0 when normalised for means, the best score 1).")
