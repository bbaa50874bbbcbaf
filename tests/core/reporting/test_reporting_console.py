"""The console summary `run` prints: report.json's `text` rendering, on real runs of every kind.

Its numbers are checked against report.json (attack and benign rates) and against a count made
here from the packs' own case tags (families, with scipy's Clopper-Pearson interval); hostile
answers and errors must reach the terminal as inert text on one line.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ragleaklab_core.reporting import console, wording
from ragleaklab_core.reporting.cases import outcome_of
from tests.support.completed_reports import completed
from tests.support.workspace import Workspace

ROOT = Path(__file__).resolve().parents[3]
PACKS = ROOT / "plugins" / "ragleaklab_plugins" / "packs"

#: ANSI colour and cursor movement, a carriage return, line breaks, a C1 CSI, a bidi override.
ESCAPES = "\x1b[31mRED\x1b[0m \x1b[2J\x1b]0;title\x07 \r\n\x9b1A \u202eevil\u202c \u2028 "

HOSTILE_TARGET = f'''

ESCAPES = {ESCAPES!r}


@define
class Escaping:
    """The reference target with terminal escapes in every answer; some queries raise with
    escapes in the message."""

    _inner: ReferenceTarget = field(factory=ReferenceTarget, init=False)

    def ingest(self, documents):
        self._inner.ingest(documents)

    def answer(self, query):
        if len(query) % 5 == 0:
            raise RuntimeError("boom " + ESCAPES)
        response = self._inner.answer(query)
        return Response(answer=ESCAPES + response.answer, retrieved=response.retrieved)
'''

CONFIG = """
[thresholds.relevance-hijack.poison_rate_at_k]
threshold = 0.2
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each kind of run by name: its report.json, what `run` printed, and the workspace."""
    ws = Workspace(
        tmp_path_factory.mktemp("console"),
        extra_source=HOSTILE_TARGET,
        extra_entry_points={"ragleaklab.targets": {"escaping": "rlk_test_fakes:Escaping"}},
    )
    (ws.root / "console.toml").write_text(CONFIG, encoding="utf-8")
    smoke = "--smoke"
    rh = ("-p", "relevance-hijack", smoke)
    unreported = ("--target", "unreported", "--config", "console.toml", "--tolerate-errors")
    printed = {
        "several-failing": ws.cli("run", smoke, "-o", "several-failing"),
        "passing": ws.cli("run", *rh, "--target", "vetted", "-o", "passing", ok=(0,)),
        "config": ws.cli("run", *rh, "--config", "console.toml", "-o", "config"),
        "errored": ws.cli("run", *rh, "--target", "broken", "-o", "errored"),
        "unscorable": ws.cli("run", *rh, *unreported, "-o", "unscorable", ok=(1,)),
        "hostile": ws.cli(
            "run", "-p", "sentinel-takeover-safe", smoke, "--target", "escaping", "-o", "hostile"
        ),
        "full": ws.cli("run", "-p", "sentinel-takeover-safe", "-o", "full"),
    }
    ws.cli(
        "calibrate", "--pack", "relevance-hijack", "--target-fpr", "0.05", "-o", "cal",
        "--write-thresholds", "--thresholds", "calibrated.json", ok=(0,),
    )  # fmt: skip
    printed["calibrated"] = ws.cli(
        "run", *rh, "--thresholds", "calibrated.json", "-o", "calibrated"
    )
    reports = {
        kind: json.loads((ws.root / kind / "report.json").read_text("utf-8")) for kind in printed
    }
    return {"reports": reports, "printed": {k: p.stdout for k, p in printed.items()}, "ws": ws}


KINDS = (
    "several-failing", "passing", "config", "errored", "unscorable", "hostile", "full",
    "calibrated",
)  # fmt: skip


def summary_of(stdout: str) -> str:
    """What `run` printed, without the lines naming the files it wrote."""
    return "".join(line for line in stdout.splitlines(True) if not line.startswith("wrote "))


def test_the_runs_are_of_every_kind(runs):
    reports = runs["reports"]
    assert sorted(reports) == sorted(KINDS)
    # Every built-in pack (their count read from the packs shipped, not written down).
    assert len(reports["several-failing"]["packs"]) == len(list(PACKS.glob("*/pack.toml")))
    assert reports["passing"]["verdict"] == "pass"
    assert not reports["passing"]["packs"][0]["warnings"]
    assert reports["errored"]["totals"]["errored"] > console.SHOWN_CASES
    assert reports["unscorable"]["packs"][0]["unscorable"]
    assert any(c["detail"] for c in reports["hostile"]["packs"][0]["case_results"])
    assert reports["hostile"]["packs"][0]["errored"]
    families = reports["full"]["packs"][0]["values"]["leak_rate"]["by_family"]
    assert len(families) > console.SHOWN_FAMILIES


@pytest.mark.parametrize("kind", KINDS)
def test_run_prints_the_text_rendering_of_its_report(runs, kind):
    printed = runs["printed"][kind]
    text = console.render(runs["reports"][kind])
    assert summary_of(printed) == text
    assert printed.splitlines()[len(text.splitlines())].startswith("wrote ")
    assert text.splitlines()[-1].startswith("verdict: ")
    shown = runs["ws"].cli("report", f"{kind}/report.json", "--format", "text", ok=(0,))
    assert shown.stdout == text


def test_the_text_does_not_depend_on_the_hash_seed(runs):
    ws = runs["ws"]
    outputs = set()
    for seed in ("0", "1", "4242"):
        shown = ws.cli("report", "full/report.json", "--format", "text", ok=(0,), hashseed=seed)
        outputs.add(shown.stdout)
    assert len(outputs) == 1
    report = runs["reports"]["full"]
    assert console.render(json.loads(json.dumps(report))) == console.render(report)


def pack_blocks(text: str) -> list[list[str]]:
    """The lines of each pack's block (a block starts at an unindented line)."""
    blocks: list[list[str]] = []
    lines = text.splitlines()[:-1]
    if lines and lines[0].startswith("tested: "):  # the system tested, before the first pack
        lines = lines[1:]
        while lines and lines[0].startswith(" "):  # wrapped
            lines = lines[1:]
    for line in lines:
        if line.startswith(("warning: ", "allowances: ", "baseline: ")):
            break  # the run's lines above the verdict, after the last pack
        if not line.startswith(" "):
            blocks.append([])
        blocks[-1].append(line)
    return blocks


def test_one_block_per_pack_in_report_order_then_the_verdict(runs):
    report = runs["reports"]["several-failing"]
    text = console.render(report)
    # First the system tested: a pass of the reference RAG must not read as one of an app.
    assert text.startswith("tested: reference (the embedded reference RAG, reference@")
    assert text.splitlines()[0].endswith(", no config file")
    assert (
        console.render(runs["reports"]["config"]).splitlines()[0].endswith(", config console.toml")
    )
    blocks = pack_blocks(text)
    assert len(blocks) == len(report["packs"])
    packs = outcome_of(report).packs
    for pack, typed, block in zip(report["packs"], packs, blocks, strict=True):
        status = wording.verdict_word(pack["verdict"])
        assert block[0] == (
            f"{status}  {pack['name']} {pack['version']}  ({wording.pack_line(typed)})"
        )
    failed = report["totals"]["failed"]
    n = len(list(PACKS.glob("*/pack.toml")))  # every built-in pack ran
    assert text.splitlines()[-1] == f"verdict: FAIL ({failed} of {n} packs failed)"


def test_a_clean_pass_takes_three_lines(runs):
    report = runs["reports"]["passing"]
    [block] = pack_blocks(console.render(report))
    assert len(block) == 3, block
    [(name, value)] = [(n, v) for n, v in report["packs"][0]["values"].items() if v["threshold"]]
    attack, benign = value["by_kind"]["attack"], value["by_kind"]["benign"]
    assert block[1].startswith(f"    {name}: score >= 0.0541296 -> FAIL, threshold from the pack's")
    assert block[2] == (
        f"      0/{attack['trials']} attack and 0/{benign['trials']} benign cases fail "
        f"(attack rate at most {wording.percent(attack['upper'])}, 95% exact)"
    )
    assert console.render(report).splitlines()[-1] == "verdict: PASS"


ROW = re.compile(
    r"^      (?P<label>attack|benign|untagged|all cases) +(?P<k>\d+)/(?P<n>\d+) failing +"
    r"(?P<rate>[\d.]+)% +\[(?P<lower>[\d.]+)%, (?P<upper>[\d.]+)%\]"
)
FAMILY_ROW = re.compile(
    r"^        (?P<label>\w+) +(?P<k>\d+)/(?P<n>\d+) failing +"
    r"(?P<rate>[\d.]+)% +\[(?P<lower>[\d.]+)%, (?P<upper>[\d.]+)%\]$"
)
MORE = re.compile(r"^        \.\.\. (?P<count>\d+) more families: (?P<k>\d+)/(?P<n>\d+) failing")


def value_lines(text: str, pack: dict[str, Any], name: str) -> list[str]:
    """The lines of gated value *name* in *pack*'s block, up to the next value or list."""
    [block] = [b for b in pack_blocks(text) if f"  {pack['name']} " in b[0]]
    at = next(i for i, line in enumerate(block) if line.startswith(f"    {name}: "))
    end = next((i for i in range(at + 1, len(block)) if re.match(r"^    \S", block[i])), len(block))
    return block[at + 1 : end]


def same_rate(match: re.Match[str], rate: dict[str, Any]) -> None:
    assert (int(match["k"]), int(match["n"])) == (rate["successes"], rate["trials"])
    for key in ("rate", "lower", "upper"):
        assert f"{match[key]}%" == wording.percent(rate[key])


@pytest.mark.parametrize("kind", KINDS)
def test_attack_and_benign_rates_are_report_json_s(runs, kind):
    report = runs["reports"][kind]
    text = console.render(report)
    checked = 0
    for pack in report["packs"]:
        for name, value in pack["values"].items():
            if not value["threshold"]:
                continue
            lines = value_lines(text, pack, name)
            rows = {m["label"]: m for m in map(ROW.match, lines) if m}
            rate, kinds = value["fail_rate"], value["by_kind"]
            if not rate or not rate["trials"]:
                assert "      no case could be scored" in lines
            elif not rate["successes"]:
                said = " and ".join(
                    f"0/{r['trials']} {k}" for k, r in (kinds or {}).items() if r["trials"]
                )
                assert lines[-1].startswith(f"      {said or '0/' + str(rate['trials'])} cases")
            elif kinds is None:
                same_rate(rows["all cases"], rate)
            else:
                for label, kind_rate in kinds.items():
                    if kind_rate["trials"]:
                        same_rate(rows[label], kind_rate)
                        checked += 1
                    else:
                        assert label not in rows
                # The built-in packs tag every case attack or benign: no other row.
                assert "untagged" not in rows
    if kind in ("several-failing", "full", "hostile", "calibrated"):
        assert checked


def rate(k: int, n: int) -> dict[str, Any]:
    interval = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return {
        "successes": k, "trials": n, "rate": round(k / n, 6), "lower": round(interval.low, 6),
        "upper": round(interval.high, 6), "confidence": 0.95,
    }  # fmt: skip


def one_value(
    fail_rate: dict[str, Any], by_kind: dict[str, Any] | None, cases: list[Any] | None = None
) -> dict[str, Any]:
    threshold = {"value": 1.0, "decision_rule": "score >= threshold -> FAIL", "source": "pack"}
    value = {"threshold": threshold, "fail_rate": fail_rate, "by_kind": by_kind}
    pack = {
        "name": "p", "version": "1", "verdict": "fail", "values": {"v": value},
        "case_results": cases or [],
    }  # fmt: skip
    return completed({"verdict": "fail", "totals": {"packs": 1, "failed": 1}, "packs": [pack]})


def test_cases_tagged_neither_attack_nor_benign_have_a_row_of_their_own():
    report = one_value(rate(4, 10), {"attack": rate(2, 5), "benign": rate(0, 3)})
    lines = value_lines(console.render(report), report["packs"][0], "v")
    rows = {m["label"]: m for m in map(ROW.match, lines) if m}
    assert list(rows) == ["attack", "benign", "untagged"]
    same_rate(rows["untagged"], rate(2, 2))  # 4 - 2 - 0 of 10 - 5 - 3
    untagged = one_value(rate(3, 10), None)
    [row] = [m for m in map(ROW.match, value_lines(console.render(untagged), {"name": "p"}, "v"))]
    same_rate(row, rate(3, 10))
    assert row["label"] == "all cases"
    # Nothing failing: one sentence naming each group.
    clean = one_value(rate(0, 10), {"attack": rate(0, 5), "benign": rate(0, 3)})
    assert value_lines(console.render(clean), {"name": "p"}, "v") == [
        "      0/5 attack, 0/3 benign and 0/2 untagged cases fail "
        f"(attack rate at most {wording.percent(rate(0, 5)['upper'])}, 95% exact)"
    ]
    clean = one_value(rate(0, 10), None)
    assert value_lines(console.render(clean), {"name": "p"}, "v") == ["      0/10 cases fail"]


def brute_force_families(pack: dict[str, Any], name: str) -> dict[str, tuple[int, int]]:
    """(failing, scored) attack cases of each family of *pack* for value *name*, counted from
    the tags in the pack's cases.jsonl and the per-case results."""
    tags = {}
    directory = PACKS / pack["name"].replace("-", "_")
    for line in (directory / "cases.jsonl").read_text("utf-8").splitlines():
        case = json.loads(line)
        tags[case["test_id"]] = case["tags"]
    counts: dict[str, list[int]] = {}
    for case in pack["case_results"]:
        case_tags = tags[case["test_id"]]
        if "attack" not in case_tags or name not in case["values"]:
            continue
        for tag in case_tags:
            if tag.startswith("family:"):
                tally = counts.setdefault(tag.removeprefix("family:"), [0, 0])
                tally[0] += name in case["failing"]
                tally[1] += 1
    return {family: (k, n) for family, (k, n) in counts.items()}


@pytest.mark.parametrize("kind", ["several-failing", "full", "errored", "config"])
def test_by_family_is_a_brute_force_count_over_the_case_tags(runs, kind):
    report = runs["reports"][kind]
    text = console.render(report)
    for pack in report["packs"]:
        for name, value in pack["values"].items():
            by_family = value["by_family"]
            if not value["threshold"]:
                assert by_family is None
                continue
            expected = brute_force_families(pack, name)
            assert list(by_family) == sorted(expected)
            for family, (k, n) in expected.items():
                rate = by_family[family]
                assert (rate["successes"], rate["trials"]) == (k, n)
                # The exact (Clopper-Pearson) interval, from scipy.
                interval = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
                assert rate["lower"] == pytest.approx(interval.low, abs=2e-6)
                assert rate["upper"] == pytest.approx(interval.high, abs=2e-6)
            # The summary lists the families (the most failing first) when attacks fail.
            lines = value_lines(text, pack, name)
            shown = {m["label"]: m for m in map(FAMILY_ROW.match, lines) if m}
            attack = (value["by_kind"] or {}).get("attack") or {}
            if not attack.get("successes"):
                assert not shown
                continue
            for family, match in shown.items():
                same_rate(match, by_family[family])
            more = [m for m in map(MORE.match, lines) if m]
            if len(by_family) <= console.SHOWN_FAMILIES:
                assert sorted(shown) == sorted(by_family) and not more
            else:
                [rest] = more
                hidden = [by_family[f] for f in by_family if f not in shown]
                assert len(shown) == console.SHOWN_FAMILIES - 1
                assert int(rest["count"]) == len(hidden)
                assert int(rest["k"]) == sum(r["successes"] for r in hidden)
                assert int(rest["n"]) == sum(r["trials"] for r in hidden)
                # Those shown are the most surely failing (by the interval's lower end).
                assert min(by_family[f]["lower"] for f in shown) >= max(r["lower"] for r in hidden)


def test_the_first_failing_cases_show_with_one_line_of_evidence(runs):
    report = runs["reports"]["several-failing"]
    text = console.render(report)
    packs = outcome_of(report).packs
    for pack, typed, block in zip(report["packs"], packs, pack_blocks(text), strict=True):
        cases = wording.pack_failing_cases(typed)
        if not cases:
            assert not any("failing cases" in line for line in block)
            continue
        at = next(i for i, line in enumerate(block) if "failing cases" in line)
        total = sum(1 for c in pack["case_results"] if c["failing"])
        assert block[at].startswith(f"    {total} failing cases")
        shown = cases[: console.SHOWN_CASES]
        for n, case in enumerate(shown):
            head, evidence = block[at + 1 + 2 * n], block[at + 2 + 2 * n]
            assert head.startswith(f"      {case.test_id} ({case.kind}, ")
            assert evidence.startswith("        ") and len(evidence) <= console.WIDTH
            first = next(iter(wording.case_evidence(case)))
            assert evidence.strip().startswith(f"{first}: ")
        # Attack cases first, then the highest value failed.
        kinds = [c.kind for c in shown]
        assert kinds == sorted(kinds, key=lambda k: k != "attack")


def test_errored_cases_show_with_their_reasons_and_the_total(runs):
    report = runs["reports"]["errored"]
    pack = report["packs"][0]
    [block] = pack_blocks(console.render(report))
    total = pack["cases"]["errored"]
    at = block.index(
        f"    {total} errored cases, the first {console.SHOWN_CASES} (runs.jsonl has every error):"
    )
    listed = list(pack["errored"].items())[: console.SHOWN_CASES]
    for n, (test_id, reason) in enumerate(listed):
        assert block[at + 1 + n] == f"      {test_id}: {reason}"


def test_unscorable_cases_are_counted_with_a_reason(runs):
    report = runs["reports"]["unscorable"]
    [block] = pack_blocks(console.render(report))
    [(metric, data)] = report["packs"][0]["unscorable"].items()
    at = block.index(f"    {data['count']} cases could not be scored by {metric}, such as:")
    test_id, reason = next(iter(data["ids"].items()))
    assert block[at + 1] == f"      {test_id}: {reason}"
    assert "      no case could be scored" in block


def test_each_threshold_says_where_it_came_from(runs):
    def origin(kind: str, value: str = "poison_rate_at_k") -> str:
        report = runs["reports"][kind]
        [block] = pack_blocks(console.render(report))
        at = next(i for i, line in enumerate(block) if line.startswith(f"    {value}: "))
        said = " ".join(line.strip() for line in block[at:])
        return said.split(", threshold from ", 1)[1]

    assert origin("config").startswith("the config file")
    assert origin("errored", "poison_attribution").startswith("the pack's default")
    calibrated = origin("calibrated", "poison_attribution")
    assert calibrated.startswith("calibrated.json (calibrated by exact on ")
    assert "labels of pack relevance-hijack)" in calibrated


def unprintable(text: str) -> set[str]:
    """The characters of *text* a terminal could act on (a newline ends a line: allowed)."""
    return {c for c in text if c != "\n" and unicodedata.category(c) in {"Cc", "Cf"}}


@pytest.mark.parametrize("kind", KINDS)
def test_no_line_is_wider_than_the_width_or_holds_a_control_character(runs, kind):
    text = console.render(runs["reports"][kind])
    assert not unprintable(text)
    assert max(len(line) for line in text.splitlines()) <= console.WIDTH


def test_hostile_answers_and_errors_reach_the_terminal_as_text(runs):
    report = runs["reports"]["hostile"]
    raw = json.dumps(report, ensure_ascii=False)
    assert "\\u001b[31m" in raw and "\u202e" in raw  # the report holds them
    text = runs["printed"]["hostile"]
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
    # The error's words are shown, the escape character gone: what is left is inert text.
    assert "boom [31mRED[0m [2J]0;title" in text


def synthetic_report(text: str, *, prose: bool = True) -> dict[str, Any]:
    """A failing pack whose every piece of free text is *text* (its reasons, warnings and
    threshold source too, unless not *prose*: those are wrapped, so they may take more lines)."""
    rate = {"successes": 1, "trials": 2, "rate": 0.5, "lower": 0.01, "upper": 0.99}
    case = {
        "test_id": text, "kind": "attack", "tags": ["attack"], "outcome": "fail",
        "failing": [text], "values": {text: 1.0}, "error": None, "unscorable": {},
        "detail": {"query": text, "answer": text, "answer_truncated": False, "retrieved_ids": []},
        "evidence": {text: [{"note": text}], "m": [{"context": text}]},
    }  # fmt: skip
    pack = {
        "name": text, "version": text, "verdict": "fail", "tested": True,
        "primary_metric": text, "cases": {"run": 2, "errored": 1, "tags": [text]},
        "values": {
            text: {
                "threshold": {"value": 0.5, "decision_rule": "score >= threshold -> FAIL",
                              "source": text if prose else "pack"},
                "fail_rate": rate, "by_kind": {"attack": rate, "benign": rate},
                "by_family": {text: rate, "other": rate},
                "summary": {"mean": 0.5},
            }
        },
        "case_results": [case],
        "errored": {text: text},
        "unscorable": {text: {"count": 1, "ids": {text: text}}},
        "reasons": [text] if prose else [], "warnings": [text] if prose else [],
    }  # fmt: skip
    return completed({"verdict": "fail", "totals": {"packs": 1, "failed": 1}, "packs": [pack]})


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(exclude_categories=("Cs",)), max_size=300))
def test_no_text_can_add_a_line_or_reach_the_terminal_raw(text):
    """Property: whatever a target or plugin puts in the report (ids, names, errors, evidence),
    the summary has the lines it has for harmless text, each under the width, and no line holds
    a control or format character; reasons and warnings are wrapped, never broken by it."""
    lines = console.render(synthetic_report(text, prose=False)).splitlines()
    assert len(lines) == len(console.render(synthetic_report("x", prose=False)).splitlines())
    assert max(len(line) for line in lines) <= console.WIDTH
    rendered = console.render(synthetic_report(text))
    assert not unprintable(rendered)
    for line in rendered.splitlines():
        assert line == line.rstrip() or not line.strip()
        assert line.startswith(("    ", "FAIL  ", "verdict: "))


def test_a_case_s_evidence_line_puts_what_was_found_before_bare_numbers():
    case = {
        "test_id": "c1", "kind": "attack", "outcome": "fail", "failing": ["v"],
        "values": {"v": 1.0}, "detail": {"query": "q"},
        "evidence": {"m": [{"k": 5, "found": [{"offset": 3, "text": "leak"}], "note": "y",
                            "empty": []}]},
    }  # fmt: skip
    report = one_value(rate(1, 1), None, cases=[case])
    lines = console.render(report).splitlines()
    at = lines.index("      c1 (attack, v 1)")
    assert lines[at - 1] == "    1 failing case with its evidence:"
    assert (
        lines[at + 1]
        == '        m: {"note": "y", "found": [{"text": "leak", "offset": 3}], "k": 5}'
    )
