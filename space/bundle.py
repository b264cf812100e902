"""Assemble the Hugging Face Space repository: the Space files plus the ``neurips26`` package beside them.

From a source checkout::

    python -m neurips26.space.bundle build/space
    hf upload ORG/NAME build/space . --repo-type space

The package is built into a wheel (``pip wheel``, offline, no dependencies) and its ``neurips26/`` folder is
unpacked next to ``app.py``, so the Space imports exactly what the wheel installs, package data included; so is
its ``.dist-info`` folder, whose entry points are how the registries (metrics, protocols) find their modules.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

SPACE_FILES = ("app.py", "README.md", "requirements.txt")


def checkout_root() -> Path:
    """The source checkout this module lives in (FileNotFoundError when installed from a wheel)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file() or not (root / "space" / "README.md").is_file():
        raise FileNotFoundError("bundling needs a source checkout of neurips26 (pyproject.toml and space/)")
    return root


def bundle(out: Path, checkout: Path | None = None) -> Path:
    """Write the Space repository into the new or empty folder ``out``; returns ``out``."""
    checkout = checkout or checkout_root()
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as wheels:
        built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                                "--wheel-dir", wheels, str(checkout)], capture_output=True, text=True)
        if built.returncode != 0:
            raise RuntimeError(f"pip wheel failed:\n{built.stderr[-3000:]}")
        wheel = next(Path(wheels).glob("neurips26-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(out, [name for name in archive.namelist()
                                     if name.startswith("neurips26/") or name.split("/")[0].endswith(".dist-info")])
    for name in SPACE_FILES:
        shutil.copy2(checkout / "space" / name, out / name)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m neurips26.space.bundle OUT")
    print(bundle(Path(sys.argv[1])))
