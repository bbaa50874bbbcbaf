"""The review page in a real headless Chromium (Debian's package), driven by the keyboard alone:
a reviewer labels a 120-case run, the server is killed halfway, started again, and the page
resumes where the reviewer stopped; every judgement made before the kill is in the file.

``tox -e browser`` runs this with ``RLK_BROWSER=1``, where a missing Chromium or Playwright is a
failure; elsewhere the test is skipped when either is missing (and says which).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.cli import rlk
from tests.support.review import review_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("RLK_BROWSER") == "1"
#: Flags for Chromium in a sandboxed CI machine with no network (docs/labelling.md): no
#: background connections, no first-run work, no sandbox (CI runs as root).
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PACKS = ("claim-corruption", "markdown-exfiltration", "citation-forgery", "relevance-hijack")


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install --group browser)"
    if not Path(CHROMIUM).exists():
        return "Debian's chromium is not installed (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def browser():
    missing = _missing()
    if missing:
        if REQUIRED:
            pytest.fail(f"RLK_BROWSER=1 but {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    packs = [arg for pack in PACKS for arg in ("-p", pack)]
    rlk("run", *packs, "--smoke", "-o", "out", cwd=tmp_path, ok=(0, 1))
    return tmp_path / "out"


def labels_in(file: Path) -> list[str]:
    return [json.loads(line)["label"] for line in file.read_text(encoding="utf-8").splitlines()]


def test_a_reviewer_labels_a_run_by_keyboard_is_killed_halfway_and_resumes(browser, run_dir):
    from playwright.sync_api import expect

    file = run_dir / "review" / "carol.jsonl"
    total = 120
    wanted: list[str] = []
    with review_server(run_dir, "carol") as served:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(served.url)
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        expect(page.locator("#progress")).to_have_text(f"0 of {total} labelled")
        expect(page.locator("#position")).to_have_text(f"case 1 of {total}")
        for i in range(total // 2):
            key = "p" if i % 3 == 0 else "n"
            wanted.append("positive" if key == "p" else "negative")
            page.keyboard.press(key)
            expect(page.locator("#progress")).to_have_text(f"{i + 1} of {total} labelled")
        # undo takes the last one back; the next key labels it again
        page.keyboard.press("u")
        expect(page.locator("#progress")).to_have_text(f"{total // 2 - 1} of {total} labelled")
        expect(page.locator("#position")).to_have_text(f"case {total // 2} of {total}")
        page.keyboard.press("n")
        wanted[-1] = "negative"
        expect(page.locator("#progress")).to_have_text(f"{total // 2} of {total} labelled")
        # the evidence is folded away until asked for
        expect(page.locator("#evidence")).not_to_have_attribute("open", "")
        page.keyboard.press("e")
        expect(page.locator("#evidence")).to_have_attribute("open", "")
        assert errors == []
        served.kill()  # mid-review, no warning
    assert labels_in(file)[: total // 2] == wanted
    assert set(labels_in(file)[total // 2 :]) == {""}
    with review_server(run_dir, "carol") as served:
        page = browser.new_page()
        page.goto(served.url)
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        expect(page.locator("#progress")).to_have_text(f"{total // 2} of {total} labelled")
        expect(page.locator("#position")).to_have_text(f"case {total // 2 + 1} of {total}")
        # a skip sets a case aside: the next key labels the case after it
        page.keyboard.press("s")
        expect(page.locator("#progress")).to_have_text(
            f"{total // 2} of {total} labelled · 1 skipped"
        )
        for i in range(total // 2 + 1, total):
            page.keyboard.press("n")
            expect(page.locator("#progress")).to_have_text(f"{i} of {total} labelled · 1 skipped")
        # the skipped case comes back under the "skipped" filter and takes its label
        page.select_option("#f-status", "skip")
        expect(page.locator("#position")).to_have_text(f"case {total // 2 + 1} of {total}")
        page.keyboard.press("p")
        expect(page.locator("#progress")).to_have_text(f"{total} of {total} labelled")
    labels = labels_in(file)
    assert "" not in labels and labels[total // 2] == "positive"


def test_an_answer_is_shown_as_text_and_loads_nothing(browser, run_dir):
    """A markdown image in an answer (an exfiltration attempt) must not be fetched or rendered:
    the page shows it as text, and its CSP forbids images anyway."""
    from playwright.sync_api import expect

    with review_server(run_dir, "dave") as served:
        page = browser.new_page()
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(served.url)
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        page.select_option("#f-pack", "markdown-exfiltration")
        page.select_option("#f-outcome", "fail")
        answer = page.locator(".answer .text").first
        expect(answer).to_contain_text("![")
        assert page.locator("main img").count() == 0
    assert all(url.startswith(f"http://127.0.0.1:{served.port}/") for url in requested)
