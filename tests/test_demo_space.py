"""After the demo's steps, ``neurips26 serve`` opens in a real browser and its Demo runs tab shows the embedded
model's run on the text track's board, apart from the ranked boards.

The steps are ``scripts/demo``'s own commands, run as a user runs them (the installed ``neurips26`` in a
subprocess, the store in ``$NEURIPS26_LEADERBOARD``): build LOCUS and RoleBench-Unlearn from their embedded
samples, evaluate the embedded model on the text track and submit, then ``neurips26 serve --data out``. The
demo's run is complete (every test document); this one passes ``--limit 2`` to keep the test short, which leaves
it UNRANKED and on the same Demo runs board, as the complete run is (demo data is never ranked).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
TIMEOUT_MS = 60_000
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"Debian's chromium is not installed at {CHROMIUM}")]


def environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURIPS26_")}
    env.update(PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", NEURIPS26_LEADERBOARD=str(root / "leaderboard"),
               NEURIPS26_CACHE=str(root / ".cache"), HF_HUB_OFFLINE="1", HF_DATASETS_CACHE=str(root / ".hf"))
    return env


def neurips26(root: Path, *args: str) -> str:
    """One ``neurips26`` command in ``root``, as the demo runs it; its output (fails the test on a non-zero exit)."""
    result = subprocess.run([str(BIN / "neurips26"), *args], cwd=root, env=environment(root), capture_output=True,
                            text=True, check=False, timeout=900)
    assert result.returncode == 0, f"neurips26 {' '.join(args)}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The demo's folders and run, and ``neurips26 serve`` over them on a free local port."""
    root = tmp_path_factory.mktemp("demo")
    neurips26(root, "build", "locus", "--out", "out/locus")
    neurips26(root, "build", "rolebench_unlearn", "--out", "out/rolebench_unlearn")
    submitted = neurips26(root, "eval", "--tasks", "neurips26", "--limit", "2", "--batch-size", "16", "--data", "out",
                          "--output", "out/results", "--submit")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([str(BIN / "neurips26"), "serve", "--data", "out", "--port", str(port)], cwd=root,
                              env=environment(root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"neurips26 serve did not open: {server.stderr.read() if server.stderr else ''}")
                time.sleep(1)
        yield {"url": url, "submitted": submitted}
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_demo_run_is_on_the_demo_runs_tab_and_on_no_ranked_board(served: dict[str, Any], tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    assert "UNRANKED submission #1" in served["submitted"]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)
        expect.set_options(timeout=TIMEOUT_MS)
        page.goto(served["url"])
        text_board = page.locator("#board-text")  # the Text LM track's overall, the first tab: no ranked run
        expect(text_board).to_contain_text("Score [95% CI]")
        expect(text_board).not_to_contain_text(MODEL)
        page.get_by_role("tab", name="Demo runs", exact=True).click()
        expect(page.locator("#demo-note")).to_contain_text("Demo runs: NOT RANKED.")
        demo = page.locator("#board-demo")
        expect(demo).to_contain_text(MODEL)
        expect(demo).to_contain_text("Score [95% CI]")
        expect(page.get_by_text(re.compile(r"processing \|"))).to_have_count(0)  # the plot beside it drawn too
        expect(demo).to_contain_text(MODEL)
        page.screenshot(path=str(tmp_path / "demo-runs.png"), full_page=True)
        browser.close()
