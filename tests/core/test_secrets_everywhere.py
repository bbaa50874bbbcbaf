"""No configured secret in any file or line a run writes, whatever text carries it.

Written as an attacker would try it: a debug build of an HTTP RAG service on loopback that
echoes every credential it was sent in its answers and its retrieved texts (raw and
percent-encoded); a python app handed connection strings of every common shape as keyword
arguments, which it quotes in its answers, its retrieved texts and its errors; headers whose
names say secret without being one of the well-known names. Then every file under the output
and recording directories, stdout and stderr are searched for each secret in each form a
secret takes (as written, percent-encoded, JSON-escaped).

And the rules themselves, both ways: names that say credential are redacted, names that only
contain a credential word (``token_limit``, ``key_field``) are not; a masked record says so,
and the metrics scored the real text; a replay of a masked recording is refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragleaklab_core._discovery import METRICS, LoadedPlugin
from ragleaklab_core._redact import (
    REDACTED,
    forget_secrets,
    is_secret_name,
    literal_secrets,
    mask_secrets,
    redact,
    redact_text,
    register_secrets,
)
from ragleaklab_core.run.executor import record_case
from ragleaklab_core.run.records import CaseRecord, mask_record
from ragleaklab_core.values import Case, MetricResult, Response, RetrievedDocument
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer

PACK = "relevance-hijack"


def forms(secret: str) -> set[str]:
    """Every form of *secret* that must never be written."""
    return {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}


def written(tmp_path: Path, out: object, *dirs: str) -> dict[str, str]:
    """stdout, stderr and the text of every file under *dirs* (the run wrote them all)."""
    files = sorted(p for d in dirs for p in (tmp_path / d).rglob("*") if p.is_file())
    texts = {"stdout": out.stdout, "stderr": out.stderr}  # type: ignore[attr-defined]
    texts.update({str(p.relative_to(tmp_path)): p.read_text(encoding="utf-8") for p in files})
    return texts


def leaks(texts: dict[str, str], secrets: list[str]) -> list[tuple[str, str]]:
    return [
        (where, form)
        for where, text in texts.items()
        for secret in secrets
        for form in forms(secret)
        if form in text
    ]


@pytest.fixture(autouse=True)
def _forget():
    # Secrets are registered process-wide: each test starts and ends with none.
    forget_secrets()
    yield
    forget_secrets()


# ---- names: both directions ------------------------------------------------------------------

SECRET_NAMES = [
    "X-Client-Secret", "X-Signature", "X-Hub-Signature-256", "Cookie", "Set-Cookie",
    "Proxy-Authorization", "x-api-key", "private_key", "passphrase", "X-Passphrase",
    "client_secret", "X-Auth-Token", "auth_header", "accessToken", "AWSAccessKeyId", "APIKey",
    "session_id", "sessionid", "X-Amz-Security-Token", "refresh_token", "db_password",
    "PGPASSWORD", "auth", "bearer", "oauth_code", "Authentication", "secretKey", "xapikey",
]  # fmt: skip
HARMLESS_NAMES = [
    "token_limit", "max_tokens", "tokens", "keyword", "key_field", "doc_id_field", "input_key",
    "answer_key", "sort_key", "api_key_env", "auth_type", "session_timeout", "status_code",
    "pass_rate", "author", "signal", "passage", "top_k", "tokenizer", "secret_name",
    "cookie_name", "password_file", "monkey",
]  # fmt: skip


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_name_that_says_credential_is_secret(name):
    assert is_secret_name(name)
    assert redact({"headers": {name: "v4lue-1234"}}) == {"headers": {name: REDACTED}}


@pytest.mark.parametrize("name", HARMLESS_NAMES)
def test_a_name_that_only_contains_a_credential_word_keeps_its_value(name):
    assert not is_secret_name(name)
    assert redact({name: "doc_id"}) == {name: "doc_id"} and redact({name: 512}) == {name: 512}


_CREDENTIALS = st.sampled_from(
    ["secret", "key", "token", "password", "passphrase", "signature", "cookie", "auth", "pwd"]
)
_PLAIN = st.sampled_from(["x", "client", "api", "hub", "my", "app", "db", "proxy", "service"])
_TRAILERS = st.sampled_from(
    ["limit", "field", "count", "type", "timeout", "name", "path", "file", "url", "env", "mode"]
)
_SEPARATORS = st.sampled_from(["-", "_", ".", " "])
_CASES = st.sampled_from([str.lower, str.upper, str.title])


@given(st.lists(_PLAIN, max_size=3), _CREDENTIALS, _SEPARATORS, _CASES, st.booleans())
def test_any_name_ending_with_a_credential_word_is_secret(words, last, sep, case, digits):
    name = sep.join(case(w) for w in [*words, last, *(["256"] if digits else [])])
    assert is_secret_name(name), name


@given(st.lists(_PLAIN, max_size=2), _CREDENTIALS, _TRAILERS, _SEPARATORS, _CASES)
def test_a_credential_word_followed_by_what_it_is_about_is_not_secret(
    words, credential, trailer, sep, case
):
    name = sep.join(case(w) for w in [*words, credential, trailer])
    assert not is_secret_name(name), name


# ---- credentials written literally --------------------------------------------------------

CONNECTION_STRINGS = [
    ("postgresql://app:Pg+pass~1@db:5432/rag", "postgresql://app:***@db:5432/rag", "Pg+pass~1"),
    ("mysql+pymysql://root:My%40pw@db/x", "mysql+pymysql://root:***@db/x", "My@pw"),
    (
        "mongodb+srv://u:Mongo-pw-7@c0.x.mongodb.net/rag?retryWrites=true",
        "mongodb+srv://u:***@c0.x.mongodb.net/rag?retryWrites=true",
        "Mongo-pw-7",
    ),
    ("redis://:Redis-pw-5@cache:6379/0", "redis://:***@cache:6379/0", "Redis-pw-5"),
    ("amqp://guest:Rabbit-pw@mq//", "amqp://guest:***@mq//", "Rabbit-pw"),
    ("Server=db;User Id=app;Password=Ms-pw-88;", "Server=db;User Id=app;Password=***;", "Ms-pw-88"),
    ("Driver={SQL};UID=a;PWD={p;w};", "Driver={SQL};UID=a;PWD=***;", "p;w"),
    ("host=db password=Lib-pw-3 dbname=y", "host=db password=*** dbname=y", "Lib-pw-3"),
    ("host=db password='two words' port=5", "host=db password=*** port=5", "two words"),
    ("sslpassword=Ssl-pw-1 host=h", "sslpassword=*** host=h", "Ssl-pw-1"),
]


@pytest.mark.parametrize(("text", "shown", "secret"), CONNECTION_STRINGS)
def test_connection_strings_are_redacted_in_text_options_and_messages(text, shown, secret):
    assert redact_text(text) == shown
    assert redact_text(f"error: cannot connect to {text} (refused)") == (
        f"error: cannot connect to {shown} (refused)"
    )
    assert redact({"kwargs": {"dsn": text}}) == {"kwargs": {"dsn": shown}}
    assert secret in literal_secrets({"kwargs": {"dsn": text}})


@pytest.mark.parametrize(
    "text",
    [
        "host=db dbname=rag user=app",  # no password
        "max_tokens=512 token_limit=9 key_field=doc_id keyword=x",
        "postgresql://app@db/rag".replace("app@", ""),  # no userinfo at all
        "password=${PGPASSWORD} host=db",  # a reference is not the secret
        "postgresql://app:${PGPASSWORD}@db/rag",
    ],
)
def test_text_without_a_literal_credential_is_kept_as_written(text):
    assert redact_text(text) == text
    assert literal_secrets({"dsn": text}) == ()


def test_answers_are_masked_only_for_configured_secrets_not_for_what_the_system_wrote():
    # An answer quoting a leaked URL or a password line is the evidence of the run: it stays.
    answer = "see https://u:stolen@evil.io/?token=abc and password=letmein"
    assert mask_secrets(answer) == (answer, False)
    register_secrets(["configured-secret-1"])
    assert mask_secrets({"a": [f"x configured-secret-1 {answer}"]}) == (
        {"a": [f"x *** {answer}"]},
        True,
    )


@pytest.mark.parametrize(
    "echo",
    [
        "Tok/en word+x",  # as configured
        "TOK/EN WORD+X",  # upper-cased by the system
        "tok%2Fen%20word%2Bx",  # percent-encoded
        "tok%2fen%20word%2bx",  # percent-encoded with lower-case hex
        "Tok%2Fen+word%2Bx",  # form-encoded
    ],
)
def test_an_echoed_secret_is_masked_in_every_form_a_system_may_give_it(echo):
    register_secrets(["Tok/en word+x"])
    hidden, changed = mask_secrets({"answer": f"the token is <{echo}>."})
    assert changed and hidden == {"answer": "the token is <***>."}


def test_a_json_escaped_echo_is_masked():
    secret = 'quote"and\\backslash'
    register_secrets([secret])
    body = json.dumps({"debug": secret})
    assert (
        secret not in mask_secrets(body)[0]
        and json.dumps(secret)[1:-1] not in (mask_secrets(body)[0])
    )


# ---- records: masked, marked, and scored on the real text ---------------------------------


class _Probe:
    """A metric that says whether the answer holds the secret, quoting the answer."""

    secret = "echoed-Secret-42"

    def score(self, case, response):
        seen = self.secret in response.answer
        return MetricResult(values={"saw": float(seen)}, evidence={"quote": response.answer})


def test_a_record_is_scored_on_the_real_answer_and_written_masked_with_its_fields_named():
    register_secrets([_Probe.secret])
    probe = LoadedPlugin(METRICS, "probe", "t:Probe", "tests", _Probe(), {})
    response = Response(
        answer=f"the key is {_Probe.secret}",
        retrieved=(RetrievedDocument("d1", text=f"doc {_Probe.secret}"),),
        metadata={"debug": quote(_Probe.secret, safe="")},
    )
    record = record_case("p", Case("c1", "what is the key?"), 0, response, None, [probe], 0.0)
    assert record.metrics["probe"]["values"] == {"saw": 1.0}  # the metric saw the secret
    assert record.answer == "the key is ***"
    assert record.metrics["probe"]["evidence"] == {"quote": "the key is ***"}
    assert record.target_metadata == {"debug": "***"}
    assert record.masked == ("answer", "metrics.probe", "target_metadata")
    line = json.dumps(record.to_dict())
    assert not any(form in line for form in forms(_Probe.secret))
    again = CaseRecord.from_dict(json.loads(line))
    assert again == record and mask_record(again) is again  # masking twice changes nothing


def test_a_record_masked_already_is_masked_again_for_a_secret_learnt_since():
    # A Ray worker masks with its secrets, the driver with its own: both hold.
    register_secrets(["worker-secret-1"])
    record = record_case(
        "p", Case("c1", "q"), 0, Response(answer="a worker-secret-1 b driver-secret-2"), None, [], 0
    )
    assert record.masked == ("answer",) and record.answer == "a *** b driver-secret-2"
    register_secrets(["driver-secret-2"])
    again = mask_record(record)
    assert again.answer == "a *** b ***" and again.masked == ("answer",)


def test_the_journal_and_the_records_spool_get_the_masked_line_even_from_an_unmasked_record():
    # Whatever an executor hands over (a record built before the secret was known, a journal
    # line of an interrupted run), the line the journal and runs.jsonl get is masked.
    from ragleaklab_core.run.executor import Ask
    from ragleaklab_core.run.sink import PackSink
    from ragleaklab_core.stats.aggregation import reducer

    journal: list[str] = []
    sink = PackSink([], reducer("mean"), frozenset(), 1, ["d1"], None, journal.append, 1, 1)
    case = Case("c1", "q")
    raw = CaseRecord("p", "c1", 0, "q", "late-secret-77 said", None, {}, None, 0.0)
    register_secrets(["late-secret-77"])
    sink.hand(Ask(0, 0, 0, case))
    sink.emit(Ask(0, 0, 0, case), raw)
    sink.finish(1)
    (written_record,) = list(sink.records)
    assert journal and "late-secret-77" not in journal[0] and '"masked": ["answer"]' in journal[0]
    assert written_record.answer == "*** said" and written_record.masked == ("answer",)


def test_a_record_without_a_secret_is_written_as_before():
    register_secrets(["not-in-this-answer"])
    record = record_case("p", Case("c1", "q"), 0, Response(answer="fine"), None, [], 0.0)
    assert record.masked == () and "masked" not in record.to_dict()


# ---- end to end: the real CLI against echoing systems ----------------------------------------

TOKEN = 'env-token-7c2e/+9"q'  # from the environment, with characters every encoding changes
CLIENT_SECRET = "literal-client-secret+9f3a"
SIGNATURE = "literal-signature/77ab"
COOKIE = "sid=literal-cookie-5e6f"
PASSPHRASE = "literal passphrase 31"


def _http_config(tmp_path: Path, server: FakeRagServer) -> Path:
    config = tmp_path / "c.toml"
    config.write_text(
        f"""
[target]
name = "http"

[target.options]
url = "{server.url("/debug")}"
ingest_url = "{server.url("/ingest")}"
reset_url = "{server.url("/reset")}"
doc_texts_path = "sources[*].text"

[target.options.headers]
Authorization = "Bearer ${{RAG_TOKEN}}"
X-Client-Secret = "{CLIENT_SECRET}"
X-Signature = "{SIGNATURE}"
Cookie = "{COOKIE}"
X-Passphrase = "{PASSPHRASE}"
X-Request-Tag = "visible-tag"
""",
        encoding="utf-8",
    )
    return config


def test_a_service_echoing_its_credentials_leaves_none_in_any_output(tmp_path):
    secrets = [TOKEN, CLIENT_SECRET, SIGNATURE, COOKIE, PASSPHRASE]
    with FakeRagServer() as server:
        config = _http_config(tmp_path, server)
        out = rlk(
            "-vv", "run", "-c", str(config), "-p", PACK, "--smoke", "-o", "o", "--record", "rec",
            "--html", "o/r.html", "--markdown", "o/r.md", "--junit", "o/r.xml",
            "--sarif", "o/r.sarif",
            cwd=tmp_path, env={"RAG_TOKEN": TOKEN},
        )  # fmt: skip
        seen = list(server.seen)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    # The service really got every credential, and really echoed them.
    asked = [s for s in seen if s.path == "/debug"]
    assert asked and all(s.headers.get("x-client-secret") == CLIENT_SECRET for s in asked)
    assert all(s.headers.get("authorization") == f"Bearer {TOKEN}" for s in asked)

    texts = written(tmp_path, out, "o", "rec")
    assert {"o/report.json", "o/runs.jsonl", "o/r.html", "o/r.md", "o/r.xml", "o/r.sarif"} <= set(
        texts
    )
    assert leaks(texts, secrets) == []

    # The text was altered, and every record that was says so: the answer always, and the
    # attribution metric's evidence where a clause it quotes from the answer held a secret.
    lines = [json.loads(x) for x in texts["o/runs.jsonl"].splitlines()]
    assert lines and all(
        x["masked"] in (["answer"], ["answer", "metrics.attribution"]) for x in lines
    )
    quoting = [x for x in lines if "metrics.attribution" in x["masked"]]
    assert quoting and all(
        "[debug: " in json.dumps(x["metrics"]["attribution"]["evidence"]) for x in quoting
    )
    assert all("[debug: " in x["answer"] and "***" in x["answer"] for x in lines)
    assert all("visible-tag" in x["answer"] for x in lines)  # what is not secret is kept
    recorded = [json.loads(x) for x in texts[f"rec/{PACK}.jsonl"].splitlines()]
    assert recorded and all(
        x["masked"] == ["response.answer", "response.retrieved"] for x in recorded
    )
    assert all("[auth: " in d["text"] for x in recorded for d in x["response"]["retrieved"])
    report = json.loads(texts["o/report.json"])
    details = [c["detail"] for p in report["packs"] for c in p["case_results"] if c["detail"]]
    assert all(d["masked"] in (["answer"], ["answer", "metrics.attribution"]) for d in details)
    if details:
        assert "a configured secret was masked as *** in: answer" in texts["o/r.html"]
    options = json.dumps(report)
    assert "Bearer ${RAG_TOKEN}" in options and "visible-tag" in options

    # A replay would score *** where the service said the secret: refused before anything.
    again = rlk("run", "--replay", "rec", "-p", PACK, "--smoke", "-o", "o2", cwd=tmp_path, ok=(2,))
    assert again.returncode == 2, again.stdout + again.stderr
    assert "--replay: " in again.stderr and "had a secret of the recording run masked" in (
        again.stderr
    )
    assert "Traceback" not in again.stderr and not (tmp_path / "o2").exists()


APP = '''
"""A RAG app that quotes its connection strings wherever it can (a debug build)."""


def build(documents=(), fail_every=0, **settings):
    calls = []
    docs = list(documents)[:2]

    def answer(query):
        calls.append(query)
        if fail_every and len(calls) % fail_every == 0:
            raise ConnectionError(f"lost the database {settings['dsn']} ({settings['conn']})")
        quoted = " ".join(str(v) for v in settings.values())
        # The question is echoed: an app answering one text to every question is not tested.
        return {
            "answer": f"{query} connected with {quoted}",
            "retrieved": [{"doc_id": d.doc_id, "text": f"{d.text} {quoted}"} for d in docs],
        }

    return answer
'''

DSN_PASSWORD = "Pg+pass~4471"
MSSQL_PASSWORD = "Mssql-pass-8812"
LIBPQ_PASSWORD = "Libpq-pass-3390"
MONGO_PASSWORD = "Mongo-pass-1207"
REDIS_PASSWORD = "Redis-pass-5521"
PRIVATE_KEY = "Private-key-value-6650"


def test_a_python_app_quoting_its_connection_strings_leaves_no_password_anywhere(tmp_path):
    (tmp_path / "secret_app.py").write_text(APP, encoding="utf-8")
    (tmp_path / "c.toml").write_text(
        f"""
[target]
name = "python"

[target.options]
callable = "secret_app:build"
factory = true

[target.options.kwargs]
dsn = "postgresql://app:{DSN_PASSWORD}@db.internal:5432/rag"
conn = "Server=db;User Id=app;Password={MSSQL_PASSWORD};"
libpq = "host=db password={LIBPQ_PASSWORD} dbname=rag"
mongo = "mongodb+srv://app:{MONGO_PASSWORD}@cluster0.x.mongodb.net/rag"
redis = "redis://:{REDIS_PASSWORD}@cache:6379/0"
private_key = "{PRIVATE_KEY}"
token_limit = 512
key_field = "doc_id"
fail_every = 3
""",
        encoding="utf-8",
    )
    out = rlk(
        "-vv", "run", "-c", "c.toml", "-p", PACK, "--smoke", "-o", "o", "--record", "rec",
        "--html", "o/r.html", "--markdown", "o/r.md", "--junit", "o/r.xml",
        "--sarif", "o/r.sarif",
        cwd=tmp_path, pythonpath=[tmp_path],
    )  # fmt: skip
    # Every third case errored (the app's error quoting its DSN): a failure, never a pass.
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    secrets = [
        DSN_PASSWORD, MSSQL_PASSWORD, LIBPQ_PASSWORD, MONGO_PASSWORD, REDIS_PASSWORD, PRIVATE_KEY
    ]  # fmt: skip
    texts = written(tmp_path, out, "o", "rec")
    assert leaks(texts, secrets) == []

    report = json.loads(texts["o/report.json"])
    kwargs = report["target"]["options"]["kwargs"]
    assert kwargs == {
        "dsn": "postgresql://app:***@db.internal:5432/rag",
        "conn": "Server=db;User Id=app;Password=***;",
        "libpq": "host=db password=*** dbname=rag",
        "mongo": "mongodb+srv://app:***@cluster0.x.mongodb.net/rag",
        "redis": "redis://:***@cache:6379/0",
        "private_key": "***",
        "token_limit": 512,  # useful settings stay readable
        "key_field": "doc_id",
        "fail_every": 3,
    }
    lines = [json.loads(x) for x in texts["o/runs.jsonl"].splitlines()]
    errored = [x for x in lines if x["error"] is not None]
    answered = [x for x in lines if x["error"] is None]
    # An error is a message, redacted as every message is (describe), before the record.
    assert errored and all("masked" not in x for x in errored)
    assert all(
        "lost the database postgresql://app:***@db" in x["error"]["message"] for x in errored
    )
    assert answered and all(x["masked"] == ["answer"] for x in answered)
    assert all("host=db password=*** dbname=rag" in x["answer"] for x in answered)

    # Masking is deterministic: the same inputs give the same report, byte for byte.
    again = rlk(
        "run", "-c", "c.toml", "-p", PACK, "--smoke", "-o", "o3",
        cwd=tmp_path, pythonpath=[tmp_path], ok=(1,),
    )  # fmt: skip
    assert again.returncode == 1
    assert (tmp_path / "o3" / "report.json").read_bytes() == (
        tmp_path / "o" / "report.json"
    ).read_bytes()


HTTP = ("--target", "http", "--target-option", 'url="https://127.0.0.1:9/x"')
PYTHON = ("--target", "python", "--target-option", 'callable="json:loads"')


@pytest.mark.parametrize(
    ("target", "option", "secret"),
    [
        # A wrongly typed value of a secret-named header: the message quotes the value.
        (HTTP, 'headers={"X-Client-Secret" = 987654321}', "987654321"),
        (HTTP, 'headers={"X-Passphrase" = ["open sesame 22"]}', "open sesame 22"),
        # A connection string where a number was expected: the message quotes it.
        (PYTHON, 'top_k="postgresql://u:Pg-pw-in-msg-5@h/db"', "Pg-pw-in-msg-5"),
        (PYTHON, 'top_k="host=db password=Libpq-in-msg-7"', "Libpq-in-msg-7"),
    ],
)
def test_an_error_message_quoting_a_credential_never_prints_it(tmp_path, target, option, secret):
    out = rlk(
        "run", *target, "--target-option", option, "-p", PACK, "--smoke", "-o", "o",
        cwd=tmp_path, ok=(2,),
    )  # fmt: skip
    assert out.returncode == 2 and out.stderr.startswith("error: "), out.stderr
    assert "***" in out.stderr  # the value was quoted, and hidden
    assert leaks({"stdout": out.stdout, "stderr": out.stderr}, [secret]) == []
    assert not (tmp_path / "o").exists()


BROKEN_APP = """
import os


def build(dsn, documents=()):
    # The app cannot connect: its error quotes the DSN it was given, and one of its own.
    own = os.environ["APP_OWN_DSN"]
    raise RuntimeError(f"could not connect to {dsn} nor to {own}")
"""


def test_an_app_whose_ingest_fails_quoting_its_dsn_is_not_tested_and_prints_no_password(
    tmp_path,
):
    (tmp_path / "broken_app.py").write_text(BROKEN_APP, encoding="utf-8")
    (tmp_path / "c.toml").write_text(
        f"""
[target]
name = "python"

[target.options]
callable = "broken_app:build"
factory = true
kwargs = {{ dsn = "postgresql://app:{DSN_PASSWORD}@db/rag" }}
""",
        encoding="utf-8",
    )
    own = "mysql://root:Own-env-pw-9@db2/x"  # not configured: hidden as a URL's password
    out = rlk(
        "run", "-c", "c.toml", "-p", PACK, "--smoke", "-o", "o", "--html", "o/r.html",
        cwd=tmp_path, pythonpath=[tmp_path], env={"APP_OWN_DSN": own}, ok=(3,),
    )  # fmt: skip
    assert out.returncode == 3, out.stdout + out.stderr  # not tested, never a pass
    texts = written(tmp_path, out, "o")
    assert leaks(texts, [DSN_PASSWORD, "Own-env-pw-9"]) == []
    report = json.loads(texts["o/report.json"])
    reason = report["packs"][0]["not_tested_reason"]
    assert "could not connect to postgresql://app:***@db/rag nor to mysql://root:***@db2/x" in (
        reason
    )
