"""Every ``NEURIPS26_*`` environment variable and every cache folder, in one place.

- ``NEURIPS26_CACHE``: the package's cache root (models, search indexes, generated releases); default
  ``$XDG_CACHE_HOME/neurips26`` or ``~/.cache/neurips26``.
- ``NEURIPS26_DATA``: the folder holding built dataset folders (``<data>/<resource>``). One rule for every
  command and task (:func:`resolve_data`): the ``--data`` flag, then ``$NEURIPS26_DATA``, then ``.`` when it holds
  built folders, then ``<cache>/data`` (where ``neurips26 build`` writes when ``.`` is not used).
- ``NEURIPS26_LEADERBOARD``: the leaderboard store folder; default ``<cache>/leaderboard``.
- ``NEURIPS26_LOCUS_GOLD``: the LOCUS gold folder (``dev.jsonl``); default ``../shared/data/locus-gold``
  beside the repository.
- ``NEURIPS26_ORIGINAL_MODEL``: the reference model RoleBench-Unlearn scores under; default the embedded model.
- ``NEURIPS26_DAILY_LIMIT``: submissions per user per UTC day on a Space; default 5.

Functions, not constants: each reads the environment when called, so tests and the CLI's
``--data``/``--store`` options can set a variable and be seen everywhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "manifest.json"  # the file that marks a finished dataset folder
REPO_ROOT = Path(__file__).resolve().parents[1]  # the source checkout (meaningful in an editable install)
DEFAULT_DAILY_LIMIT = 5


def cache_dir() -> Path:
    """``$NEURIPS26_CACHE``, else ``$XDG_CACHE_HOME/neurips26``, else ``~/.cache/neurips26``."""
    root = os.environ.get("NEURIPS26_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "neurips26")
    return Path(root)


def holds_datasets(folder: Path) -> bool:
    """True when ``folder`` has at least one built dataset folder (``<folder>/<name>/manifest.json``; hidden
    folders, builds in progress, do not count)."""
    try:
        return any((p / MANIFEST).is_file() for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return False


@dataclass(frozen=True)
class DataRoot:
    """Where built dataset folders are read from, and which step of the rule chose it."""

    path: Path
    source: str  # "--data", "NEURIPS26_DATA", "." or "cache"

    @property
    def fell_back(self) -> bool:
        """True when neither ``--data`` nor ``$NEURIPS26_DATA`` chose the folder."""
        return self.source in (".", "cache")

    def describe(self) -> str:
        """One line saying which folder is used and why, e.g. for stderr."""
        why = {"--data": "from --data", "NEURIPS26_DATA": "from $NEURIPS26_DATA",
               ".": "no --data or $NEURIPS26_DATA; the current folder holds built folders",
               "cache": "no --data or $NEURIPS26_DATA, and no built folders in the current folder"}[self.source]
        return f"data: {self.path} ({why})"


def resolve_data(flag: Path | None = None) -> DataRoot:
    """The one data rule: ``flag`` (``--data``), then ``$NEURIPS26_DATA``, then ``.`` when it holds built folders,
    then ``<cache>/data``."""
    if flag is not None:
        return DataRoot(Path(flag), "--data")
    if os.environ.get("NEURIPS26_DATA"):
        return DataRoot(Path(os.environ["NEURIPS26_DATA"]), "NEURIPS26_DATA")
    if holds_datasets(Path.cwd()):
        return DataRoot(Path.cwd(), ".")
    return DataRoot(cache_dir() / "data", "cache")


def data_root() -> Path:
    """The folder :func:`resolve_data` picks when no flag is given."""
    return resolve_data().path


def set_data_root(folder: Path) -> None:
    """Make ``folder`` the data root of this process (``--data``), for every later :func:`data_root` call,
    including the task loaders lm-eval runs."""
    os.environ["NEURIPS26_DATA"] = str(Path(folder).resolve())


def leaderboard_dir() -> Path:
    """``$NEURIPS26_LEADERBOARD``, else ``<cache>/leaderboard``."""
    if os.environ.get("NEURIPS26_LEADERBOARD"):
        return Path(os.environ["NEURIPS26_LEADERBOARD"])
    return cache_dir() / "leaderboard"


def locus_gold_dir() -> Path:
    """``$NEURIPS26_LOCUS_GOLD``, else ``../shared/data/locus-gold`` beside the repository."""
    if os.environ.get("NEURIPS26_LOCUS_GOLD"):
        return Path(os.environ["NEURIPS26_LOCUS_GOLD"])
    return REPO_ROOT.parent / "shared" / "data" / "locus-gold"


def original_model() -> str | None:
    """``$NEURIPS26_ORIGINAL_MODEL`` (a model id or folder), or None for the embedded model."""
    return os.environ.get("NEURIPS26_ORIGINAL_MODEL") or None


def daily_limit() -> int:
    """Submissions per user per UTC day on a Space: ``$NEURIPS26_DAILY_LIMIT``, default 5."""
    return int(os.environ.get("NEURIPS26_DAILY_LIMIT", DEFAULT_DAILY_LIMIT))
