"""The Markdown and HTML renderings of report.json, on real reports of every kind of run.

The Markdown is read back with GitHub's own parser (cmark-gfm, through ``cmarkgfm``) and the HTML
with html5lib (strict: a parse error fails) and the stdlib parser, so what is checked is what a
reader's renderer makes of the output, not what the renderer meant to write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragleaklab_core.errors import InputError
from ragleaklab_core.reporting import html as html_report
from ragleaklab_core.reporting import markdown, wording
from ragleaklab_core.reporting.cases import outcome_of
from ragleaklab_core.stats.aggregation import RateInterval
from tests.support.completed_reports import completed
from tests.support.workspace import Workspace

cmarkgfm = pytest.importorskip("cmarkgfm", reason="cmarkgfm is in the test dependency group")
html5lib = pytest.importorskip("html5lib", reason="html5lib is in the test dependency group")

from cmarkgfm.cmark import Options  # noqa: E402

#: What a hostile target answers with, before its real answer: table, code, tag, attribute and
#: link breakers, autolinks, a mention and GitHub math.
PAYLOAD = (
    '| x | `code` <script>alert(1)</script> "><img src=x onerror=alert(2)> '
    "[click](javascript:alert(3)) ![i](https://evil.example/a.png) https://evil.example "
    "www.evil.example @octocat $x^2$ &amp; \\| ~~s~~ **b** "
)

HOSTILE_TARGET = f'''

PAYLOAD = {PAYLOAD!r}


@define
class Hostile:
    """The reference target, with markup in front of every answer."""

    _inner: ReferenceTarget = field(factory=ReferenceTarget, init=False)

    def ingest(self, documents):
        self._inner.ingest(documents)

    def answer(self, query):
        response = self._inner.answer(query)
        return Response(answer=PAYLOAD + response.answer, retrieved=response.retrieved)
'''


def _workspace(root: Path) -> Workspace:
    """The faulty targets, a hostile one, and a scaffolded third-party pack."""
    ws = Workspace(
        root,
        extra_source=HOSTILE_TARGET,
        extra_entry_points={
            "ragleaklab.targets": {"hostile": "rlk_test_fakes:Hostile"},
            "ragleaklab.packs": {"acme-demo": "ragleaklab_acme_demo:AcmeDemoPack"},
        },
        paths=(root / "ragleaklab-acme-demo",),
    )
    ws.cli("new-pack", "acme-demo", ok=(0,))
    return ws


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """report.json of every kind of run by name, and a pack's calibration report."""
    ws = _workspace(tmp_path_factory.mktemp("reporting"))
    smoke = "--smoke"
    ws.cli("run", smoke, "-o", "several-failing")
    ws.cli(
        "run", "-p", "relevance-hijack", smoke, "--target", "vetted", "-o", "passing", ok=(0,),
    )  # fmt: skip
    ws.cli(
        "calibrate", "--pack", "sentinel-takeover-safe", smoke, "-o", "cal",
        "--write-thresholds", "--thresholds", "thresholds.json",
    )  # fmt: skip
    ws.cli(
        "run", "-p", "sentinel-takeover-safe", smoke, "--thresholds", "thresholds.json",
        "--epochs", "2", "--reducer", "max", "-o", "epochs",
    )  # fmt: skip
    ws.cli("run", "-p", "relevance-hijack", smoke, "--target", "broken", "-o", "errored")
    ws.cli(
        "run", "-p", "relevance-hijack", smoke, "--target", "unreported", "--tolerate-errors",
        "-o", "unscorable", ok=(0, 1, 3),
    )  # fmt: skip
    ws.cli("run", "-p", "acme-demo", "-o", "third-party")
    ws.cli("run", "-p", "sentinel-takeover-safe", smoke, "--target", "hostile", "-o", "hostile")
    reports = {
        p.parent.name: json.loads(p.read_text("utf-8")) for p in ws.root.glob("*/report.json")
    }
    calibration = json.loads((ws.root / "cal" / "calibration_report.json").read_text("utf-8"))
    return {"reports": reports, "calibration": calibration, "root": ws.root}


KINDS = ("several-failing", "passing", "epochs", "errored", "unscorable", "third-party", "hostile")


def test_the_runs_are_of_every_kind(runs):
    reports = runs["reports"]
    assert sorted(reports) == sorted(KINDS)
    # every installed pack: the built-ins (counted from the packs shipped) and the third-party one
    shipped = Path(__file__).resolve().parents[3] / "plugins" / "ragleaklab_plugins" / "packs"
    assert len(reports["several-failing"]["packs"]) == len(list(shipped.glob("*/pack.toml"))) + 1
    assert reports["passing"]["verdict"] == "pass"
    assert reports["epochs"]["packs"][0]["cases"]["epochs"] == 2
    assert reports["errored"]["packs"][0]["errored"]
    assert reports["unscorable"]["packs"][0]["unscorable"]
    assert reports["third-party"]["packs"][0]["plugin"]["provider"] == "rlk-test-fakes 1.0"
    hostile = [c for c in reports["hostile"]["packs"][0]["case_results"] if c["detail"]]
    assert hostile and all(c["detail"]["answer"].startswith(PAYLOAD[:50]) for c in hostile)


def failing_case(test_id: str, text: str = "", **fields: Any) -> dict[str, Any]:
    """A failing case of ``packs[].case_results``, detailed, with *text* everywhere."""
    return {
        "test_id": test_id, "kind": "attack", "tags": ["attack"], "outcome": "fail",
        "values": {"v": 1.0}, "failing": ["v"], "error": None, "unscorable": {},
        "detail": {
            "query": text, "answer": text, "answer_truncated": False, "retrieved_ids": [text],
        },
        "evidence": {"m": [{"note": text}]},
        **fields,
    }  # fmt: skip


# --- Markdown -------------------------------------------------------------------------------


def gfm(text: str) -> Any:
    """*text* as GitHub renders it (cmark-gfm with GitHub's extensions), parsed by html5lib."""
    rendered = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE)
    return html5lib.parse(rendered, namespaceHTMLElements=False), rendered


def tables(tree: Any) -> list[list[list[str]]]:
    """Every table as rows of cell texts."""
    return [
        [["".join(cell.itertext()) for cell in row] for row in table.iter("tr")]
        for table in tree.iter("table")
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_markdown_of_every_run_reads_as_github_shows_it(runs, kind):
    report = runs["reports"][kind]
    text = markdown.render(report)
    assert text == markdown.render(report)
    assert len(text) <= markdown.MAX_CHARS == 65536
    # Under the cap, nothing is cut: the text is the uncapped one, byte for byte.
    assert text == markdown.render(report, max_chars=0)
    assert "was cut" not in text
    first = text.splitlines()[0]
    assert first.startswith("## ") and wording.verdict_word(report["verdict"]) in first
    tree, _ = gfm(text)
    # One table per pack, then the top failing cases and the collapsed rest when there are any.
    found = tables(tree)
    failing = wording.failing_cases(outcome_of(report))
    expected = len(report["packs"]) + (failing != []) + (len(failing) > markdown.TOP_CASES)
    assert len(found) == expected
    for table in found:
        assert len({len(row) for row in table}) == 1, table  # no cell was split or merged
    for pack, table in zip(report["packs"], found, strict=False):
        gated = [name for name, value in pack["values"].items() if value["threshold"]]
        for name in gated:
            row = next(r for r in table if r[0] == name)
            rate = pack["values"][name]["fail_rate"]
            if rate:
                assert row[5].startswith(f"{rate['successes']}/{rate['trials']}")
    assert tree.find(".//a") is None and tree.find(".//script") is None
    assert (tree.find(".//details") is not None) == (len(failing) > markdown.TOP_CASES)


def test_markdown_splits_attack_and_benign_cases_with_exact_intervals(runs):
    report = runs["reports"]["several-failing"]
    tree, _ = gfm(markdown.render(report))
    for pack, table in zip(report["packs"], tables(tree), strict=False):
        for name, value in pack["values"].items():
            if not value["by_kind"]:
                continue
            at = next(i for i, row in enumerate(table) if row[0] == name)
            kinds = {row[4]: row for row in table[at + 1 : at + 3]}
            for kind, rate in value["by_kind"].items():
                if not rate["trials"]:
                    assert kind not in kinds  # a pack with no case of that kind has no row
                    continue
                row = kinds[kind]
                assert row[5].startswith(f"{rate['successes']}/{rate['trials']}")
                assert row[6] == wording.interval_text(RateInterval(**rate))
            total = value["fail_rate"]["trials"]
            assert sum(r["trials"] for r in value["by_kind"].values()) <= total


def test_a_hostile_answer_cannot_break_the_markdown(runs):
    report = runs["reports"]["hostile"]
    text = markdown.render(report)
    tree, rendered = gfm(text)
    # Only the structure the renderer writes: no link, image, code, emphasis, script or math.
    tags = {el.tag for el in tree.iter() if isinstance(el.tag, str)}
    assert tags <= {
        "html", "head", "body", "h2", "h3", "p", "strong", "em", "table", "thead", "tbody",
        "tr", "th", "td", "ul", "li", "details", "summary", "blockquote",
    }, tags  # fmt: skip
    assert "<script" not in rendered and "<img" not in rendered and "href" not in rendered
    # Every failing case is shown with the payload as text, in a row of the right width.
    cells = [cell for table in tables(tree) for row in table for cell in row]
    shown = wording.clip(PAYLOAD, markdown.CELL_CHARS).strip()
    assert any(cell.startswith(shown[:60]) for cell in cells), shown
    for table in tables(tree):
        assert len({len(row) for row in table}) == 1


# Text with everything Markdown, HTML and GitHub read as syntax, plus any other character.
# fmt: off
SYNTAX = (
    "|", "`", "```", "<", ">", "<script>", "](javascript:", "[", "]", "(", ")", "*", "_", "~",
    "$", "&amp;", "&#124;", "\\", "\\|", "https://x.example", "www.x.example", "@someone", "!",
    "#", ":", "<!--", "-->", "</td>", "</details>", " ", "\n", "\n\n",
)
# fmt: on
hostile_text = st.lists(
    st.sampled_from(SYNTAX) | st.text(st.characters(exclude_categories=("Cs",)), max_size=4),
    max_size=40,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(query=hostile_text, answer=hostile_text, test_id=hostile_text)
@example(query="", answer="", test_id="https://x.example@someonewww.x.example")  # e-mail autolink
@example(query="write to a.b@c.example", answer="x@y.example @team", test_id="id")
def test_any_case_text_stays_text_in_its_cell(query, answer, test_id):
    """Property: whatever a case's query, answer and id hold, GitHub shows each as the text of
    its own cell (clipped), in a row as wide as the table, and makes nothing of it."""
    detail = {"query": query, "answer": answer, "answer_truncated": False, "retrieved_ids": []}
    case = failing_case(test_id, answer, detail=detail)
    pack = {
        "name": "p",
        "version": "1",
        "verdict": "fail",
        "values": {},
        "case_results": [case] * (markdown.TOP_CASES + 1),
    }
    report = completed({"verdict": "fail", "packs": [pack], "tool": {"version": "0"}})
    tree, _ = gfm(markdown.render(report))
    assert tree.find(".//a") is None and tree.find(".//img") is None
    assert tree.find(".//code") is None and tree.find(".//script") is None
    found = tables(tree)
    assert len(found) == 3  # the pack, the top cases, the collapsed rest
    for table in found[1:]:
        assert {len(row) for row in table} == {len(table[0])}
        for row in table[1:]:
            # An '@' is followed by an invisible word joiner, so GitHub links no address.
            row = [cell.replace("@\u2060", "@") for cell in row]
            assert row[1] == visible(test_id, markdown.CELL_CHARS // 2)
            assert row[4] == visible(query, markdown.CELL_CHARS)
            assert row[5] == visible(answer, markdown.CELL_CHARS)


def visible(text: str, limit: int) -> str:
    """What a cell shows of *text*: clipped on one line, printable characters, no outer spaces."""
    return "".join(c for c in wording.clip(text, limit) if c.isprintable()).strip()


def cut_structure(report: dict[str, Any], text: str) -> dict[str, Any]:
    """What of *report* a (possibly cut) Markdown summary still shows."""
    return {
        "pack_headings": sum(line.startswith("### ") for line in text.splitlines())
        - ("### Top failing cases" in text),
        "value_tables": text.count("| value | mean | threshold |"),
        "case_tables": text.count("| pack | case | kind |"),
        "errored_lists": text.count("\n- errored "),
        "details": text.count("<details>"),
    }


@pytest.mark.parametrize("limit", [2_000, 3_000, 5_000, 9_000, 14_000, 20_000, 25_000])
def test_markdown_is_cut_to_the_limit_case_lists_first(runs, limit):
    report = runs["reports"]["several-failing"]
    whole = markdown.render(report, max_chars=0)
    assert len(whole) > limit
    text = markdown.render(report, max_chars=limit)
    assert len(text) <= limit
    assert text == markdown.render(report, max_chars=limit)
    # The verdict and the totals are never cut; the note says what was and where it all is.
    head = whole.split("\n\n### ", 1)[0]
    assert text.startswith(head + "\n\n> **Note:** this summary was cut to stay under ")
    note = text.split("> **Note:**", 1)[1].split("\n", 1)[0]
    assert f"under {limit} characters" in note and "report.json" in note
    assert "--format html" in note
    # Case lists go before any pack table: a pack table missing means no case list is left.
    shown, full = cut_structure(report, text), cut_structure(report, whole)
    if shown["value_tables"] < full["value_tables"]:
        assert shown["case_tables"] == shown["errored_lists"] == shown["details"] == 0
        assert "of values" in note
    if shown["pack_headings"] < full["pack_headings"]:
        assert shown["value_tables"] == 0
        left = full["pack_headings"] - shown["pack_headings"]
        said = "The last pack is" if left == 1 else f"The last {left} packs are"
        assert f"\n{said} only in report.json." in text
    if shown["case_tables"] == full["case_tables"] and shown["details"]:
        assert "the collapsed list shows the first " in note
    # What remains reads as Markdown: sections closed, every table row whole.
    assert text.count("<details>") == text.count("</details>")
    tree, _ = gfm(text)
    for table in tables(tree):
        assert len({len(row) for row in table}) == 1
        assert len(table) > 1  # a header without a row is never left


def test_packs_past_the_cap_are_counted_the_verdict_kept(runs):
    report = json.loads(json.dumps(runs["reports"]["several-failing"]))
    report["packs"] = [
        {**pack, "name": f"{pack['name']}-{i}"} for i in range(12) for pack in report["packs"]
    ]
    text = markdown.render(report, max_chars=2_000)  # the smallest cap accepted
    assert len(text) <= 2_000
    assert text.splitlines()[0] == "## \u274c ragleaklab: FAIL"
    assert "| value | mean |" not in text and "| pack | case |" not in text
    kept = [line for line in text.splitlines() if line.startswith("### ")]
    left = len(report["packs"]) - len(kept)
    assert kept and left > 0
    assert kept[0].startswith(f"### \u274c {report['packs'][0]['name']} ")
    assert f"\nThe last {left} packs are only in report.json." in text
    assert f"the last {left} packs. The full report is report.json" in text


def test_a_cap_as_large_as_the_report_changes_nothing(runs):
    report = runs["reports"]["several-failing"]
    whole = markdown.render(report, max_chars=0)
    assert markdown.render(report, max_chars=len(whole)) == whole
    assert len(markdown.render(report, max_chars=len(whole) - 1)) <= len(whole) - 1


def huge(report: dict[str, Any]) -> dict[str, Any]:
    """*report* with 200 times its failing cases, each asked with a 5000-character query."""
    report = json.loads(json.dumps(report))
    for pack in report["packs"]:
        failing = [c for c in pack["case_results"] if c["detail"]]
        pack["case_results"] = [
            {**c, "test_id": f"{c['test_id']}-{i}", "detail": {**c["detail"], "query": "q" * 5000}}
            for i in range(200)
            for c in failing
        ]
    return report


def test_a_huge_report_fits_a_pull_request_comment_by_default(runs):
    report = huge(runs["reports"]["several-failing"])
    assert len(markdown.render(report, max_chars=0)) > 10 * markdown.MAX_CHARS
    text = markdown.render(report)
    assert markdown.MAX_CHARS - 2_000 < len(text) <= markdown.MAX_CHARS
    assert text.splitlines()[0] == "## \u274c ragleaklab: FAIL"
    assert f"**{markdown.text(wording.run_line(outcome_of(report)), 400)}**" in text
    assert "this summary was cut to stay under 65536 characters" in text
    # Every pack keeps its table: only the case list past what fits was cut.
    assert text.count("| value | mean | threshold |") == len(report["packs"])
    assert markdown.render(runs["reports"]["passing"]).count("cut") == 0


def test_renderings_do_not_depend_on_the_hash_seed(runs, tmp_path):
    path = runs["root"] / "several-failing" / "report.json"
    cal = runs["root"] / "cal" / "calibration_report.json"
    code = (
        "import json, sys\n"
        "from ragleaklab_core.reporting import html, markdown\n"
        f"r = json.load(open({str(path)!r}, encoding='utf-8'))\n"
        f"c = json.load(open({str(cal)!r}, encoding='utf-8'))\n"
        "sys.stdout.write(markdown.render(r) + html.render(r, calibration=c))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            check=True,
        ).stdout
        for seed in ("0", "1", "12345")
    }
    assert len(outputs) == 1


# --- HTML -----------------------------------------------------------------------------------


class Collector(HTMLParser):
    """Tags, attributes and script bodies, as the stdlib parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def parse_html(page: str) -> tuple[Any, Collector]:
    strict = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    tree = strict.parse(page)  # raises on any parse error
    collector = Collector()
    collector.feed(page)
    collector.close()
    return tree, collector


def assert_self_contained(page: str, collector: Collector) -> None:
    """No reference to anything outside the page, and only the page's own script."""
    for tag, attrs in collector.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name in {"src", "href", "action", "srcset", "poster", "data", "xlink:href"}:
                raise AssertionError(f"<{tag} {name}={value!r}> references a resource")
        assert tag not in {"link", "img", "iframe", "object", "embed", "base", "form"}, tag
    assert collector.scripts == [html_report._SCRIPT]
    assert "url(" not in page.split("<style>")[1].split("</style>")[0]
    assert "@import" not in page


@pytest.mark.parametrize("kind", KINDS)
def test_html_of_every_run_is_one_valid_self_contained_page(runs, kind):
    report = runs["reports"][kind]
    page = html_report.render(report)
    assert page == html_report.render(report)
    tree, collector = parse_html(page)
    assert_self_contained(page, collector)
    # Remote addresses appear only as text: the hostile run's answers, and every built-in
    # run's markdown-exfiltration answers, name them (assert_self_contained: nothing loads).
    if kind not in ("hostile", "several-failing"):
        assert "http://" not in page and "https://" not in page
    header = tree.find(".//header")
    assert wording.verdict_word(report["verdict"]) in "".join(header.itertext())
    sections = tree.findall(".//section[@class='pack']")
    assert [s.get("data-pack") for s in sections] == [p["name"] for p in report["packs"]]
    for pack, section in zip(report["packs"], sections, strict=True):
        rows = ["".join(td.itertext()) for td in section.iter("td")]
        for name, value in pack["values"].items():
            assert name in rows
            if value["fail_rate"]:
                assert wording.count_text(RateInterval(**value["fail_rate"])) in rows
    # Every failing case the report details is a row, with its query, answer and evidence.
    listed = [(p.name, c.test_id) for p, c in wording.failing_cases(outcome_of(report))]
    body = tree.find(".//table[@id='cases']/tbody")
    shown = [] if body is None else [(tr.get("data-pack"), tr[1].text) for tr in body]
    assert sorted(shown) == sorted(listed)
    checks = {i.get("value") for i in tree.iter("input") if i.get("data-filter") == "pack"}
    assert checks == {p for p, _ in listed}


def test_a_hostile_answer_is_text_in_the_html(runs):
    report = runs["reports"]["hostile"]
    page = html_report.render(report, calibration=runs["calibration"])
    tree, collector = parse_html(page)
    assert_self_contained(page, collector)
    assert tree.find(".//img") is None and tree.find(".//a") is None
    assert len(tree.findall(".//script")) == 1
    answers = [tr[5].text or "" for tr in tree.find(".//table[@id='cases']/tbody")]
    assert answers and all(a.startswith(PAYLOAD.strip()) for a in answers)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(2)&gt;" in page


@given(text=hostile_text)
@settings(max_examples=100, deadline=None)
def test_any_case_text_is_text_in_the_html(text):
    case = failing_case(
        text, text, kind=text, tags=[text], values={text: 1.0}, failing=[text],
        evidence={text: [{text: text}]},
    )  # fmt: skip
    pack = {"name": text, "version": text, "verdict": "fail", "values": {}}
    report = completed({"verdict": "fail", "packs": [{**pack, "case_results": [case]}]})
    page = html_report.render(report)
    tree, collector = parse_html(page)
    assert_self_contained(page, collector)
    row = tree.find(".//table[@id='cases']/tbody/tr")
    # control characters are invalid in HTML: shown as U+FFFD; carriage returns are newlines
    expected = html_report.INVALID.sub("\ufffd", text.replace("\r\n", "\n").replace("\r", "\n"))
    assert row.get("data-pack") == expected
    assert [row[1].text or "", row[4].text or ""] == [expected, expected]


def test_the_calibration_section_draws_the_roc_table(runs):
    report = runs["reports"]["epochs"]
    calibration = runs["calibration"]
    page = html_report.render(report, calibration=calibration)
    tree, collector = parse_html(page)
    assert_self_contained(page, collector)
    section = tree.find(".//section[@id='calibration']")
    assert section is not None
    svg = {el.tag.rpartition("}")[2]: el for el in section.iter() if isinstance(el.tag, str)}
    line = svg["polyline"]
    points = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
    assert len(points) == len(calibration["roc_table"]) + 2  # with (0, 0) and (1, 1)
    xs = [x for x, _ in points]
    ys = [y for _, y in points]
    assert xs == sorted(xs) and ys == sorted(ys, reverse=True)  # FPR and TPR never fall
    assert min(xs) == 40 and max(xs) == 340 and min(ys) == 40 and max(ys) == 340
    marker = svg["circle"]
    result = calibration["result"]
    assert float(marker.get("cx")) == pytest.approx(40 + 300 * result["achieved_fpr"], abs=0.01)
    assert float(marker.get("cy")) == pytest.approx(
        40 + 300 * (1 - result["achieved_tpr"]), abs=0.01
    )
    text = "".join(section.itertext())
    assert calibration["fitter"]["name"] in text and calibration["guarantee"] in text
    assert html_report.render(report).count('id="calibration"') == 0


def test_the_page_forbids_every_fetch_and_every_other_script():
    import base64
    import hashlib

    page = html_report.render(completed({"verdict": "pass", "packs": []}))
    tree, _ = parse_html(page)
    meta = tree.find(".//meta[@http-equiv='Content-Security-Policy']")
    policy = meta.get("content")
    digest = base64.b64encode(hashlib.sha256(html_report._SCRIPT.encode()).digest()).decode()
    assert "default-src 'none'" in policy and f"script-src 'sha256-{digest}'" in policy


# --- the cases report.json holds without their detail -----------------------------------------


def test_failing_cases_past_the_detailed_ones_are_counted_exactly(runs):
    """The renderings list the failing cases that have their detail and count the others: not
    the errored ones, and not a failing case twice for failing two values."""
    report = json.loads(json.dumps(runs["reports"]["several-failing"]))
    pack = max(
        report["packs"], key=lambda p: sum(c["outcome"] == "fail" for c in p["case_results"])
    )
    failing = [c for c in pack["case_results"] if c["outcome"] == "fail"]
    assert len(failing) > 3
    for case in failing[3:]:
        case["detail"], case["evidence"] = None, {}
    failing[-1]["failing"] = failing[-1]["failing"] * 2  # as if it failed a second value
    unlisted = len(failing) - 3
    errored = failing_case("errored", outcome="error", values={}, failing=[], error="boom")
    pack["case_results"].append({**errored, "detail": None, "evidence": {}})
    outcome = outcome_of(report)
    typed = outcome.pack(pack["name"])
    assert typed is not None and wording.unlisted_failing(typed) == unlisted
    listed = [c.test_id for p, c in wording.failing_cases(outcome) if p.name == pack["name"]]
    assert sorted(listed) == sorted(c["test_id"] for c in failing[:3])
    text = markdown.render(report)
    assert f"\n{unlisted} more failing cases are counted but not detailed in report.json." in text
    page = html_report.render(report)
    assert f"; {unlisted} more are counted but not detailed in report.json." in page


@pytest.mark.parametrize("render", [markdown.render, html_report.render])
def test_a_report_without_the_case_detail_is_refused_by_its_path(runs, render):
    report = json.loads(json.dumps(runs["reports"]["epochs"]))
    del report["packs"][0]["case_results"][2]["detail"]
    with pytest.raises(InputError, match=r"^\$\.packs\[0\]\.case_results\[2\]: no detail \("):
        render(report)
    del report["packs"][0]["case_results"]
    with pytest.raises(InputError, match=r"^\$\.packs\[0\]: report.json has no case_results"):
        render(report)


def test_a_case_scored_in_several_epochs_shows_each_epochs_evidence(runs):
    report = runs["reports"]["epochs"]
    (pack, case), *_ = wording.failing_cases(outcome_of(report))
    assert pack.cases.epochs == 2
    (metric, epochs), *_ = case.evidence.items()
    assert len(epochs) == 2
    assert wording.shown_evidence(case.evidence)[metric] == epochs
    row = parse_html(html_report.render(report))[0].find(".//table[@id='cases']/tbody/tr")
    shown = json.loads(json.dumps(wording.shown_evidence(case.evidence)))
    assert json.loads(row[7][0].text) == shown
    single = {metric: epochs[:1]}
    assert wording.shown_evidence(single) == {metric: epochs[0]}
