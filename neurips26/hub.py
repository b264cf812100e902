"""Push a Hub-ready folder to the Hugging Face Hub, unchanged, and plan that push offline.

A push makes the repo equal to the folder where the build owns the files: shards and videos on the Hub that
the folder no longer has (a rebuild with fewer shards, a dropped config) are deleted in the same commit
(``upload_folder(delete_patterns=...)``), so ``load_dataset`` never reads stale shards beside new ones. The
commit message carries the manifest's sha256, the digest tasks and the leaderboard record as the data read.
:func:`push_plan` computes the same upload and deletions from the folder and a listing of the repo's files
(the Hub's, or a folder standing for it), with ``huggingface_hub``'s own pattern matching.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .settings import MANIFEST

# Folders a build writes whole: remote files under them that the folder lacks are stale.
OWNED_PATTERNS = ["data/*", "videos/*"]
IGNORED_PATTERNS = [".*", "**/.*"]


def files_to_push(folder: Path) -> list[tuple[str, int]]:
    """(relative path, bytes) of every file that would be uploaded (hidden files excluded)."""
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            out.append((rel.as_posix(), path.stat().st_size))
    return out


def stale_files(local: list[str], remote: list[str]) -> list[str]:
    """Remote files under the build-owned folders that the local folder does not have: what a push deletes."""
    from huggingface_hub.utils import filter_repo_objects  # lazy: huggingface_hub is only needed to publish

    keep = set(local)
    return sorted(p for p in filter_repo_objects(remote, allow_patterns=OWNED_PATTERNS) if p not in keep)


def commit_message(folder: Path) -> tuple[str, str]:
    """(title, description) of the push commit: the resource, builder version and manifest sha256."""
    raw = (folder / MANIFEST).read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    version = json.loads(raw).get("builder", {}).get("version", "?")
    return (f"Upload {folder.name} (builder {version}, manifest sha256 {digest[:12]})",
            f"manifest.json sha256: {digest}")


@dataclass
class PushPlan:
    """What a push of ``folder`` would do: files uploaded, stale remote files deleted, the commit message."""

    upload: list[tuple[str, int]]
    delete: list[str]
    remote_source: str  # where the remote listing came from, in words
    commit_message: str

    @property
    def upload_bytes(self) -> int:
        """Bytes uploaded (before the Hub's deduplication)."""
        return sum(size for _, size in self.upload)


def remote_listing(repo: str, remote: Path | None = None) -> tuple[list[str], str]:
    """The repo's current files and, in words, where that list came from: ``remote`` (a folder standing for the
    repo, e.g. a copy of the last pushed build) when given, else the Hub. An unreachable Hub gives an empty list
    and says so."""
    if remote is not None:
        if not Path(remote).is_dir():
            raise UserError(f"--remote {remote}: no such folder")
        return [p for p, _ in files_to_push(Path(remote))], f"remote files as in {remote}"
    from huggingface_hub import HfApi  # lazy: only publishing needs huggingface_hub
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        return HfApi().list_repo_files(repo, repo_type="dataset"), f"remote files of {repo} on the Hub"
    except RepositoryNotFoundError:
        return [], f"{repo} does not exist yet"
    except Exception as exc:  # offline, no route, proxy: the plan is still useful without deletions
        reason = " ".join(str(exc).split())[:120]
        return [], f"Hub not reachable ({type(exc).__name__}: {reason}); deletions unknown, pass --remote DIR"


def push_plan(folder: Path, repo: str, remote: Path | None = None) -> PushPlan:
    """The upload and deletions a push of ``folder`` to ``repo`` would make (see :func:`remote_listing`)."""
    upload = files_to_push(folder)
    listing, source = remote_listing(repo, remote)
    title, _ = commit_message(folder)
    return PushPlan(upload, stale_files([p for p, _ in upload], listing), source, title)


def push(folder: Path, repo: str, *, private: bool = False, token: str | None = None,
         revision: str | None = None) -> str:
    """Create the dataset repo if needed and upload the folder, deleting stale data files; returns the commit URL."""
    from huggingface_hub import HfApi  # lazy: only publishing needs huggingface_hub

    api = HfApi(token=token)
    api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
    title, description = commit_message(folder)
    info = api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset", revision=revision,
                             ignore_patterns=IGNORED_PATTERNS, delete_patterns=OWNED_PATTERNS,
                             commit_message=title, commit_description=description)
    return str(info)
