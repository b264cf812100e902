"""The ``neurips26`` command line: the sub-command modules wired into one app.

One module per command family: :mod:`.build` (``build <resource>``), :mod:`.datasets` (``query``, ``search``,
``push``), :mod:`.evaluate` (``tasks``, ``eval``), :mod:`.diagnose` (``diagnose``); commands and sub-apps that live
with their component are only added here (the ``app.command`` and ``app.add_typer`` lines below). Expected failures
of every command become one line on stderr and exit code 2 (:mod:`.guard`); commands print rows with
:mod:`neurips26.output`.
"""

from __future__ import annotations

import typer

from neurips26.corpora.video.cli import generate
from neurips26.leaderboard.cli import leaderboard, submit
from neurips26.methods.actions.cli import actions
from neurips26.methods.diagnostics.cli import forensic, probe
from neurips26.methods.fic.cli import fic
from neurips26.methods.frameselect.cli import frameselect
from neurips26.methods.geometry.cli import geometry
from neurips26.methods.holmes.cli import holmes
from neurips26.methods.ipg.cli import ipg
from neurips26.methods.labelshift.cli import labelshift
from neurips26.methods.locus_analysis.cli import score
from neurips26.methods.rediff.cli import rediff
from neurips26.methods.unlearn.cli import unlearn
from neurips26.space.serve import serve

from .build import build_app, sample_path
from .datasets import push, query, search
from .diagnose import diagnose
from .evaluate import eval_, tasks
from .guard import GuardedGroup
from .plugins import plugins

app = typer.Typer(cls=GuardedGroup, no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False,
                  help="Hub-ready datasets, lm-eval tasks and a leaderboard for NeurIPS 2026 resources.")
app.add_typer(build_app, name="build")
for command in (sample_path, query, search, push, tasks, diagnose, plugins):
    app.command()(command)
app.command("eval")(eval_)
for command in (generate, submit, leaderboard, serve, labelshift, unlearn, ipg):
    app.command()(command)
app.add_typer(frameselect, name="frameselect")  # neurips26 frameselect run|replay|list
app.add_typer(score, name="score")  # neurips26 score locus|gold|train-heads
app.add_typer(rediff, name="rediff")  # neurips26 rediff train|eval
app.add_typer(probe, name="probe")  # neurips26 probe text|vision
app.add_typer(forensic, name="gfm")  # neurips26 gfm train
app.add_typer(geometry, name="geometry")  # neurips26 geometry eval|bench
app.add_typer(holmes, name="holmes")  # neurips26 holmes run
app.add_typer(actions, name="actions")  # neurips26 actions train|eval|compare|codecs|freeact
app.add_typer(fic, name="fic")  # neurips26 fic eval|distill


def main() -> None:  # pragma: no cover - console entry point
    """The console entry point."""
    app(prog_name="neurips26")
