"""Push a Hub-ready folder to the Hugging Face Hub, unchanged."""

from __future__ import annotations

from pathlib import Path


def files_to_push(folder: Path) -> list[tuple[str, int]]:
    """(relative path, bytes) of every file that would be uploaded (hidden files excluded)."""
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            out.append((rel.as_posix(), path.stat().st_size))
    return out


def push(folder: Path, repo: str, *, private: bool = False, token: str | None = None,
         revision: str | None = None) -> str:
    """Create the dataset repo if needed and upload the folder; returns the commit URL."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset", revision=revision,
                             ignore_patterns=[".*", "**/.*"], commit_message=f"Upload {folder.name}")
    return str(info)
