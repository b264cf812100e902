"""The real app in headless Chromium: submit a real lm-eval results file (made complete: see board_fixtures),
find the model on the leaderboard and its model page, see a malformed file's reason, run SQL on the Datasets tab.

Chromium is Debian's package (/usr/bin/chromium), driven by Playwright's Python package.
"""

from __future__ import annotations

import json
import re
import socket
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neurips26.leaderboard.store import Store
from neurips26.space.app import build_app
from neurips26.space.submitting import params_text

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
    expect(textbox(page, "params")).to_have_value(params_text(counted))  # prefilled from the file, as "135M"
    expect(textbox(page, "precision")).to_have_value("float32")
    upload(page, "samples-files", list(run["samples"].values()))
    verdict = fill_and_submit(page)
    expect(verdict).to_have_value(re.compile(r"^VALID: "))
    entry = server["store"].entries()[0]
    assert entry.status == "VALID" and entry.model_id == MODEL and entry.submitter == "local"
    assert len(entry.samples_sha256) == 2
    expect(page.locator("#submitted-scores")).to_contain_text("locus_domain")

    page.get_by_role("tab", name="Leaderboard", exact=True).click()
    overall = page.locator("#board-locus")  # the test store's one track: its group
    expect(overall).to_contain_text(MODEL)
    expect(overall).to_contain_text("Score [95% CI]")
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


# -- how it looks: every tab at a desktop and a narrow width --------------------------------------------------------

TABS = ("Leaderboard", "Submit", "Model page", "Datasets")
# Table cells whose text does not fit (cut or spilling), as "<table id>: <text>".
OVERFLOWING_CELLS = """() => [...document.querySelectorAll('table td, table th')]
    .filter(cell => cell.offsetParent !== null)
    .flatMap(cell => [cell, ...cell.querySelectorAll('*')])
    .filter(el => el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'auto'
                  && getComputedStyle(el).overflowX !== 'scroll')
    .map(el => (el.closest('[id]') || {}).id + ': ' + el.textContent.trim().slice(0, 60))
    .concat([...document.querySelectorAll('table td')].filter(cell => cell.offsetParent !== null
             && cell.textContent.includes('…')).map(cell => 'cut: ' + cell.textContent.trim().slice(0, 60)))"""


def settled(page: Any) -> None:
    """Wait until no component shows Gradio's "processing" status."""
    from playwright.sync_api import expect

    expect(page.get_by_text(re.compile(r"processing \|"))).to_have_count(0)


@pytest.mark.parametrize("width", [1400, 800])
def test_every_tab_fits_at_desktop_and_narrow_widths(page: Any, server: dict[str, Any], width: int,
                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    from playwright.sync_api import expect

    assert server["store"].entries(), "runs after test_submit_validate_and_find_the_model: boards have a row"
    shots = tmp_path_factory.mktemp(f"screenshots-{width}")
    page.set_viewport_size({"width": width, "height": 1000})
    page.reload()
    overall = page.locator("#board-locus")  # the test store's one track: its group
    expect(overall).to_contain_text(MODEL)
    for tab in TABS:
        page.get_by_role("tab", name=tab, exact=True).click()
        if tab == "Model page":
            expect(page.locator("#model-about")).to_contain_text(REVISION)
        if tab == "Datasets":
            expect(page.locator("#views")).to_contain_text("locus.sections")
        settled(page)
        path = shots / f"{tab.lower().replace(' ', '-')}-{width}.png"
        page.screenshot(path=str(path), full_page=True)
        assert path.stat().st_size > 10_000 and png_width(path) == width
        assert page.evaluate(OVERFLOWING_CELLS) == [], f"{tab} at {width} px: cells do not fit ({path})"
        assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{tab} scrolls sideways at {width}"
    if width == 1400:  # the interval is in the score cell, on screen without scrolling the table
        page.get_by_role("tab", name="Leaderboard", exact=True).click()
        header = overall.get_by_text("Score [95% CI]").first
        cell = overall.locator("td").filter(has_text=re.compile(r"\d\.\d+ \[-?\d\.\d+, -?\d\.\d+\]")).first
        for element in (header, cell):
            box = element.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    page.set_viewport_size({"width": 1400, "height": 1000})


def png_width(path: Path) -> int:
    """The pixel width in a PNG file's header."""
    return int.from_bytes(path.read_bytes()[16:20], "big")


def test_the_per_task_tab_opens_on_a_task_with_submissions(page: Any) -> None:
    from playwright.sync_api import expect

    page.reload()
    page.get_by_role("tab", name="Per task", exact=True).click()
    expect(page.locator("#board-task")).to_contain_text(MODEL)


def test_choosing_a_file_says_at_once_what_it_holds(page: Any, run: dict[str, Any], tmp_path: Path) -> None:
    from playwright.sync_api import expect

    page.reload()
    page.get_by_role("tab", name="Submit", exact=True).click()
    upload(page, "results-file", [run["file"]])
    expect(textbox(page, "verdict")).to_have_value(re.compile(rf"^Read {re.escape(run['file'].name)}: lm-eval "))
    text = tmp_path / "results_notes.json"
    text.write_text("these are my notes")
    page.reload()
    page.get_by_role("tab", name="Submit", exact=True).click()
    upload(page, "results-file", [text])
    expect(textbox(page, "verdict")).to_have_value(re.compile(r"^This file cannot be submitted: .* is not JSON"))


# -- Hugging Face login (gradio[oauth]) against a stand-in for the Hub's identity endpoint ------------------------

APP_WITH_LOGIN = """
import sys
from neurips26.space.app import build_app
demo = build_app(sys.argv[1], sys.argv[2], require_login=True, daily_limit=5, tasks_dir=sys.argv[4])
demo.queue().launch(server_name="127.0.0.1", server_port=int(sys.argv[3]), quiet=True)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def identity_provider() -> Iterator[str]:
    """The Hub's ``/api/whoami-v2`` for the token ``hf_test``: the user ``alice`` (what Gradio's login asks)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class WhoAmI(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server interface
            known = self.path.startswith("/api/whoami") and self.headers.get("authorization") == "Bearer hf_test"
            body = json.dumps({"type": "user", "name": "alice", "fullname": "Alice Example",
                               "avatarUrl": "/avatar.png", "auth": {"accessToken": {"role": "read"}}}).encode()
            self.send_response(200 if known else 401)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body if known else b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), WhoAmI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_hugging_face_login_routes_and_unsigned_submit(page: Any, run: dict[str, Any], identity_provider: str,
                                                       tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    import time

    pytest.importorskip("authlib", reason="the gradio[oauth] extra is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    port = free_port()
    (tmp_path / "tasks").mkdir()
    tasks = protocol_tasks(tmp_path / "tasks")
    env = {k: v for k, v in os.environ.items() if k not in ("SPACE_ID", "HF_HUB_OFFLINE")}
    env.update(HF_ENDPOINT=identity_provider, HF_TOKEN="hf_test", NEURIPS26_CACHE=str(tmp_path / "cache"))
    argv = [sys.executable, "-c", APP_WITH_LOGIN, str(tmp_path / "store"), str(run["data_root"]), str(port), str(tasks)]
    app = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://localhost:{port}/"  # a secure context: the session cookie is Secure, SameSite=None
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(url, timeout=1)
                break
            except OSError:
                assert app.poll() is None, app.stdout.read() if app.stdout else ""
                time.sleep(0.5)
        context = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})  # its own cookies
        try:
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            page.get_by_role("tab", name="Submit", exact=True).click()
            upload(page, "results-file", [run["file"]])
            upload(page, "samples-files", list(run["samples"].values()))
            verdict = fill_and_submit(page)
            sync_api.expect(verdict).to_have_value("Sign in with Hugging Face to submit.")  # not signed in yet
        finally:
            context.close()
        # The login routes gradio[oauth] adds: sign-in goes to the callback, which signs the user in (a session
        # cookie holding the identity the stand-in Hub endpoint gave for the token).
        opener = urllib.request.build_opener(NoRedirect)
        first = opener.open(f"{url}login/huggingface")
        assert first.status in (302, 307) and "/login/callback" in first.headers["location"]
        second = opener.open(f"{url}login/callback?" + first.headers["location"].split("?", 1)[1])
        assert second.status in (302, 307) and "session=" in (second.headers.get("set-cookie") or "")
    finally:
        app.terminate()
        app.wait(timeout=30)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Return redirects instead of following them."""

    def redirect_request(self, *args: Any) -> None:
        return None

    def http_error_302(self, req: Any, fp: Any, code: int, msg: str, headers: Any) -> Any:
        return fp

    http_error_307 = http_error_302

