"""The real app in headless Chromium: submit a real lm-eval results file (made complete: see board_fixtures),
find the model on the leaderboard and its model page, see a malformed file's reason, run SQL on the Datasets tab.

Chromium is Debian's package (/usr/bin/chromium), driven by Playwright's Python package.
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neurips26.leaderboard.store import Store
from neurips26.space.app import build_app

from tests.board_fixtures import protocol_tasks, real_run

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
REVISION = "12fd25f77366fa6b3b4b768ec3050bf629380bac"
TIMEOUT_MS = 60_000

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.is_file(), reason=f"Debian's chromium is not installed at {CHROMIUM}"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:gradio.queueing"),  # Gradio's own pandas calls
]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real lm-eval run of the embedded model on our tasks, made complete (see ``tests.board_fixtures``)."""
    return real_run(tmp_path_factory.mktemp("space_browser_eval"))


@pytest.fixture(scope="module")
def server(run: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The app on a free local port, over an empty store whose tasks have protocols."""
    store_root = tmp_path_factory.mktemp("space_store")
    tasks = protocol_tasks(tmp_path_factory.mktemp("space_tasks"))
    demo = build_app(store_root, run["data_root"], tasks_dir=tasks)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo.queue().launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield {"url": f"http://127.0.0.1:{port}/", "store": Store(store_root, tasks_dir=tasks)}
    finally:
        demo.close()


@pytest.fixture(scope="module")
def page(server: dict[str, Any]) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        tab.set_default_timeout(TIMEOUT_MS)
        sync_api.expect.set_options(timeout=TIMEOUT_MS)
        tab.goto(server["url"])
        yield tab
        browser.close()


def textbox(page: Any, elem_id: str) -> Any:
    return page.locator(f"#{elem_id}").locator("textarea, input").first


def choose(page: Any, elem_id: str, option: str) -> None:
    """Pick ``option`` in a Gradio dropdown."""
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def upload(page: Any, elem_id: str, files: list[Path]) -> None:
    """Upload ``files`` into a Gradio File component and wait until it lists them."""
    from playwright.sync_api import expect

    page.locator(f"#{elem_id} input[type=file]").set_input_files([str(p) for p in files])
    for path in files:
        expect(page.locator(f"#{elem_id}")).to_contain_text(path.stem)  # shown as "<stem> .<suffix>"


def fill_and_submit(page: Any) -> Any:
    """Fill what the results file does not say, press Submit; the verdict box."""
    textbox(page, "model-id").fill(MODEL)
    textbox(page, "revision").fill(REVISION)
    choose(page, "model-type", "instruction-tuned")
    choose(page, "license", "apache-2.0")
    page.locator("#submit-button").click()
    return textbox(page, "verdict")


def run_sql(page: Any, sql: str) -> None:
    """Replace the SQL editor's text and press Run."""
    page.locator("#sql .cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.type(sql)
    page.locator("#run-sql").click()


def test_submit_validate_and_find_the_model(page: Any, server: dict[str, Any], run: dict[str, Any],
                                            tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Submit", exact=True).click()
    upload(page, "results-file", [run["file"]])
    counted = json.loads(run["file"].read_text())["config"]["model_num_parameters"]
    expect(textbox(page, "params")).to_have_value(str(counted))  # prefilled from the file
    expect(textbox(page, "precision")).to_have_value("float32")
    upload(page, "samples-files", list(run["samples"].values()))
    verdict = fill_and_submit(page)
    expect(verdict).to_have_value(re.compile(r"^VALID: "))
    entry = server["store"].entries()[0]
    assert entry.status == "VALID" and entry.model_id == MODEL and entry.submitter == "local"
    assert len(entry.samples_sha256) == 2
    expect(page.locator("#submitted-scores")).to_contain_text("locus_domain")

    page.get_by_role("tab", name="Leaderboard", exact=True).click()
    overall = page.locator("#board-Overall")
    expect(overall).to_contain_text(MODEL)
    expect(overall).to_contain_text("95% CI")
    expect(page.locator("#overall-definition")).to_contain_text("overall = mean over the tasks in scope")
    page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
    textbox(page, "search").fill("no-such-model")
    expect(overall).not_to_contain_text(MODEL)
    textbox(page, "search").fill("smollm2")
    expect(overall).to_contain_text(MODEL)

    overall.get_by_text(MODEL, exact=True).last.click()  # a row opens its model page
    expect(page.locator("#model-about")).to_contain_text(REVISION)
    expect(page.locator("#model-breakdown")).to_contain_text("rougeL")
    expect(page.locator("#model-settings")).to_contain_text("lm_eval_version")
    expect(page.locator("#model-settings")).to_contain_text("0.4.13")


def test_a_malformed_file_shows_its_reason(page: Any, server: dict[str, Any], run: dict[str, Any],
                                           tmp_path: Path) -> None:
    from playwright.sync_api import expect

    broken = tmp_path / "results_broken.json"
    broken.write_bytes(run["file"].read_bytes()[:200])  # cut off mid-file
    page.reload()
    page.get_by_role("tab", name="Submit", exact=True).click()
    upload(page, "results-file", [broken])
    textbox(page, "params").fill("135M")
    choose(page, "precision", "float32")
    verdict = fill_and_submit(page)
    expect(verdict).to_have_value(re.compile(r"^REJECTED: results: not a JSON file"))
    entry = server["store"].entries()[0]
    assert entry.status == "REJECTED"
    expect(verdict).to_have_value(f"REJECTED: {entry.reason}")


def test_read_only_sql_on_the_datasets_tab(page: Any) -> None:
    from playwright.sync_api import expect

    page.get_by_role("tab", name="Datasets", exact=True).click()
    expect(page.locator("#views")).to_contain_text("locus.sections")
    expect(textbox(page, "sql-status")).to_have_value(re.compile(r"^\d+ row\(s\)$"))  # the example query ran
    run_sql(page, "DELETE FROM locus.sections")
    expect(textbox(page, "sql-status")).to_have_value("error: only SELECT queries are allowed, not DELETE")

    markup = "<b>bold</b><img src=x>**md**"  # shown as text, never rendered
    run_sql(page, f"SELECT '{markup}' AS text, DATE '2026-01-02' AS day")
    expect(textbox(page, "sql-status")).to_have_value("1 row(s)")
    result = page.locator("#sql-result")
    expect(result).to_contain_text(markup)
    expect(result).to_contain_text("2026-01-02")
    assert result.locator("b, img, strong").count() == 0
