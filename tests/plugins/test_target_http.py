"""The http target against a real loopback server: templates, paths, secrets, retries, faults."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tomllib
import types
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ragleaklab_plugins.targets._net import (
    MissingEnvironmentVariable,
    RetryPolicy,
    Secrets,
    TargetRequestError,
    TargetResponseError,
    parse_retry_after,
    redact_url,
)
from ragleaklab_plugins.targets._paths import WILDCARD, JsonPath
from ragleaklab_plugins.targets.http import HttpTarget
from ragleaklab_plugins.targets.openai_compatible import OpenAICompatibleTarget
from ragleaklab_plugins.targets.python import PythonTarget
from ragleaklab_plugins.targets.reference import ReferenceTarget

from ragleaklab_core import ConfigError, Document, InputError, load_plugin
from ragleaklab_core.run.runner import RunSettings, is_transport_failure, load_pack, run_pack
from ragleaklab_core.run.suite import isolation_of
from tests.support.fake_rag_server import FakeRagServer

ROOT = Path(__file__).resolve().parents[2]
TARGETS = "ragleaklab.targets"
SENTINEL = "sk-SENTINEL-7f3a9c"  # a secret that must never show up client-side
NESTED = {
    "answer_path": "data.answer",
    "doc_ids_path": "data.sources[*].id",
    "doc_texts_path": "data.sources[*].text",
    "doc_scores_path": "data.sources[*].score",
}
DOCS = [
    Document("vault", "The vault code is alpha seven. It rotates weekly."),
    Document("refund", "Refunds take ten business days after approval."),
    Document("hours", "The office opens at nine and closes at five."),
]


def fast(**options: Any) -> HttpTarget:
    """A target whose waits between attempts are about a millisecond."""
    return HttpTarget(**{"backoff": 0.001, "timeout": 5.0, **options})


def ask(target: HttpTarget, query: str):
    async def go():
        try:
            return await target.aanswer(query)
        finally:
            await target.aclose()

    return asyncio.run(go())


def failure(target: HttpTarget, query: str = "q") -> TargetRequestError:
    with pytest.raises(TargetRequestError) as info:
        ask(target, query)
    return info.value


# ---- paths ---------------------------------------------------------------------------------


def test_paths_select_keys_indices_and_wildcards():
    doc = {"data": {"hits": [{"doc": {"id": "a"}}, {"doc": {"id": "b"}}], "n": [1, 2, 3]}}
    assert JsonPath.parse("data.hits[*].doc.id").select(doc) == ["a", "b"]
    assert JsonPath.parse("data.hits[1].doc.id").select_one(doc) == "b"
    assert JsonPath.parse("$.data.n[-1]").select_one(doc) == 3
    assert JsonPath.parse("$").select_one(doc) is doc
    assert JsonPath.parse("[*][0]").select([[1, 2], [3]]) == [1, 3]
    assert JsonPath.parse("a[*].b[*]").select({"a": [{"b": [1, 2]}, {"b": []}, {"b": [3]}]}) == [
        1,
        2,
        3,
    ]


@pytest.mark.parametrize(
    ("path", "doc", "message"),
    [
        ("data.answer", {"data": {}}, "no key 'answer' in $.data"),
        ("a[*].id", {"a": [{"id": 1}, {}]}, "no key 'id' in $.a[1]"),
        ("a[2]", {"a": [1]}, "$.a has 1 items, no [2]"),
        ("a.b", {"a": [1]}, "$.a is a list, not an object"),
        ("a[*]", {"a": {"x": 1}}, "$.a is an object, not a list"),
        ("a.b", {"a": None}, "$.a is null"),
    ],
)
def test_a_path_that_does_not_match_says_where_it_stopped(path, doc, message):
    with pytest.raises(ValueError, match="^" + message.replace("[", r"\[").replace("$", r"\$")):
        JsonPath.parse(path).select(doc)


@pytest.mark.parametrize("bad", ["", "a..b", "a.", "a[x]", "a[*", "a]"])
def test_malformed_paths_are_rejected(bad):
    with pytest.raises(ValueError):
        JsonPath.parse(bad)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text("abc xyz_-", min_size=1, max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=100, deadline=None)
@given(json_values, st.randoms(use_true_random=False))
def test_a_path_walked_into_a_document_selects_what_the_walk_reached(doc, rng):
    # Brute force: walk down at random, writing the path as we go; the parser and selector
    # must come back to the same value.
    value, text, steps = doc, "$", []
    while isinstance(value, dict | list) and value and rng.random() < 0.8:
        if isinstance(value, dict):
            key = rng.choice(sorted(value))
            text, value = f"{text}.{key}", value[key]
            steps.append(key)
        else:
            i = rng.randrange(-len(value), len(value))
            text, value = f"{text}[{i}]", value[i]
            steps.append(i)
    path = JsonPath.parse(text)
    assert list(path.steps) == steps
    assert path.select_one(doc) == value


@settings(max_examples=50)
@given(st.lists(st.dictionaries(st.sampled_from("xyz"), st.integers(), min_size=3)))
def test_a_wildcard_selects_one_value_per_item(items):
    path = JsonPath.parse("rows[*].y")
    assert path.steps[1] is WILDCARD
    assert path.select({"rows": items}) == [item["y"] for item in items]


# ---- templates and paths over HTTP -------------------------------------------------------------


def test_nested_response_paths_give_what_the_in_process_target_gives(server):
    target = fast(url=server.url("/rag"), ingest_url=server.url("/ingest"), **NESTED)
    target.ingest(DOCS)
    local = ReferenceTarget()
    local.ingest(DOCS)
    got = target.answer("what is the vault code")
    want = local.answer("what is the vault code")
    target.close()
    assert got.answer == want.answer and "alpha seven" in got.answer
    assert got.retrieved is not None and want.retrieved is not None
    assert [(r.doc_id, r.text, r.score) for r in got.retrieved] == [
        (r.doc_id, r.text, r.score) for r in want.retrieved
    ]
    assert got.metadata == {"status": 200, "attempts": 1}


NASTY = 'He said "stop" \\ C:\\new\\table\n\ttab {query} {{query}} ${HOME} </script> ünï 🙂 \x00'


def test_the_query_is_inserted_as_data_whatever_it_holds(server):
    body = {
        "input": {"text": "{query}", "prefix": "Q: {query}!"},
        "list": ["{query}", 1, True, None],
        "k": 3,
        "{query}": "keys are left alone",
    }
    target = fast(url=server.url("/echo"), body=body, doc_ids_path=None)
    ask(target, NASTY)
    sent = server.seen[-1].json
    assert sent == {
        "input": {"text": NASTY, "prefix": f"Q: {NASTY}!"},
        "list": [NASTY, 1, True, None],
        "k": 3,
        "{query}": "keys are left alone",
    }


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text())
def test_any_query_reaches_the_server_intact(shared_server, query):
    # Clear per example: an earlier test may leave faults it did not use (an unretried 409).
    shared_server.clear()
    target = fast(url=shared_server.url("/echo"), doc_ids_path=None)
    response = target.answer(query)
    target.close()
    assert response.answer == "echo"
    assert shared_server.seen[-1].json == {"query": query}


def test_get_sends_the_query_as_url_parameters(server):
    target = fast(
        url=server.url("/rag"),
        method="get",
        params={"q": "{query}", "lang": "en"},
        ingest_url=server.url("/ingest"),
        **NESTED,
    )
    target.ingest(DOCS)
    response = target.answer("refunds & days?")
    target.close()
    seen = server.seen[-1]
    assert (seen.method, seen.params, seen.json) == (
        "GET",
        {"q": "refunds & days?", "lang": "en"},
        None,
    )
    assert response.retrieved is not None and response.retrieved[0].doc_id == "refund"


def test_get_without_the_query_in_params_is_refused():
    with pytest.raises(ValueError, match=r"the query is never sent.*params \(GET sends no body\)"):
        HttpTarget(method="GET")
    with pytest.raises(ValueError, match="the query is never sent"):
        HttpTarget(body={"text": "fixed"})


def test_an_answer_path_that_does_not_match_is_an_error_naming_it(server):
    target = fast(url=server.url("/echo"), answer_path="data.answer")
    with pytest.raises(TargetResponseError, match=r"answer_path 'data.answer' does not match.*"):
        ask(target, "q")
    target = fast(url=server.url("/echo"), answer_path="method.x")
    with pytest.raises(TargetResponseError, match=r"\$.method is a string, not an object"):
        ask(target, "q")
    target = fast(url=server.url("/echo"), answer_path="params")
    with pytest.raises(TargetResponseError, match="answer_path 'params' selects dict"):
        ask(target, "q")


def test_missing_doc_ids_give_no_retrieval_so_metrics_say_unscorable(server):
    response = ask(fast(url=server.url("/echo")), "q")  # echo has no "sources"
    assert response.retrieved is None
    assert "no key 'sources'" in response.metadata["retrieved_missing"]
    assert ask(fast(url=server.url("/echo"), doc_ids_path=None), "q").retrieved is None


def test_misaligned_texts_and_bad_ids_are_errors(server):
    server.target.ingest(DOCS)
    bad_texts = fast(url=server.url("/rag"), **{**NESTED, "doc_texts_path": "data.sources[*].x"})
    with pytest.raises(TargetResponseError, match=r"'data.sources\[\*\].x' does not match"):
        ask(bad_texts, "vault")
    count = fast(url=server.url("/rag"), **{**NESTED, "doc_texts_path": "data.sources[0].text"})
    with pytest.raises(TargetResponseError, match=r"selects 1 values but doc_ids_path"):
        ask(count, "vault code office refunds")
    ids = fast(url=server.url("/rag"), **{**NESTED, "doc_ids_path": "data.sources[*]"})
    with pytest.raises(TargetResponseError, match="item 0 is dict, not an id"):
        ask(ids, "vault")


def test_doc_id_pattern_maps_chunk_ids_back_and_keeps_unmatched_ids(server):
    server.target.ingest(DOCS)
    plain = ask(fast(url=server.url("/chunked")), "vault code")
    assert plain.retrieved and plain.retrieved[0].doc_id == "vault::chunk-0"
    mapped = ask(
        fast(url=server.url("/chunked"), doc_id_pattern=r"^(?P<doc_id>.+?)::chunk-\d+$"),
        "vault code",
    )
    assert mapped.retrieved is not None
    assert mapped.retrieved[0] == attrs.evolve(
        plain.retrieved[0], doc_id="vault", chunk_id="vault::chunk-0"
    )
    assert [r.doc_id for r in mapped.retrieved] == [
        r.doc_id.partition("::")[0] for r in plain.retrieved
    ]
    # an id the pattern does not match is kept whole, so the wiring check counts it as unknown
    other = ask(fast(url=server.url("/chunked"), doc_id_pattern=r"^(?P<doc_id>x)$"), "vault code")
    assert other.retrieved == plain.retrieved


def test_a_body_that_is_not_json_is_an_error(server):
    with pytest.raises(TargetResponseError, match="is not JSON: 'plain text, not JSON'"):
        ask(fast(url=server.url("/text")), "q")


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/stream", "text/event-stream"),
        ("/ndjson", "application/x-ndjson"),
        ("/stream-untyped", "text/event-stream"),  # labelled text/plain, read by its lines
    ],
)
def test_a_streamed_response_is_named_a_stream_not_broken_json(server, path, kind):
    server.target.ingest(DOCS)
    with pytest.raises(TargetResponseError) as info:
        ask(fast(url=server.url(path)), "vault code")
    assert str(info.value) == (
        f"the response of POST {server.url(path)} is a stream ({kind}); ragleaklab reads one "
        'JSON object: turn streaming off in the request (for example "stream": false in the body)'
    )


def test_only_http_and_https_urls_are_accepted():
    for url in ("ftp://host/x", "file:///etc/passwd", "localhost:8000/q", "http://", "//h/x"):
        with pytest.raises(ValueError, match="'url' must be an http:// or https:// URL"):
            HttpTarget(url=url)
    with pytest.raises(ValueError, match="'ingest_url'"):
        HttpTarget(ingest_url="gopher://h/")
    assert HttpTarget(url="HTTPS://example.invalid/q").url == "HTTPS://example.invalid/q"


def test_bad_options_are_config_errors_at_their_paths():
    with pytest.raises(ConfigError, match=r"expected float, got str 'fast' @ \$.options.timeout"):
        load_plugin(TARGETS, "http", {"timeout": "fast"})
    with pytest.raises(ConfigError) as info:
        load_plugin(TARGETS, "http", {"retries": -1, "answer_path": "a..b", "url": "ftp://h"})
    text = str(info.value)
    assert "@ $.options.retries" in text and "@ $.options.answer_path" in text
    assert "@ $.options.url" in text


# ---- secrets ---------------------------------------------------------------------------------


def test_env_headers_are_sent_but_never_shown(server, monkeypatch):
    monkeypatch.setenv("RLK_TEST_TOKEN", SENTINEL)
    options = {
        "url": server.url("/echo") + "?api_key=${RLK_TEST_TOKEN}&page=1",
        "headers": {"Authorization": "Bearer ${RLK_TEST_TOKEN}", "X-Trace": "plain"},
        "doc_ids_path": None,
    }
    plugin = load_plugin(TARGETS, "http", options)
    target = plugin.obj
    response = ask(target, "q")
    seen = server.seen[-1]
    assert seen.headers["authorization"] == f"Bearer {SENTINEL}"
    assert seen.params == {"api_key": SENTINEL, "page": "1"}
    # The reported options keep the references, which are not secret.
    assert plugin.options["headers"] == options["headers"]
    assert plugin.options["url"] == options["url"]
    for shown in (repr(target), json.dumps(plugin.options), json.dumps(dict(response.metadata))):
        assert SENTINEL not in shown


def test_errors_never_carry_secrets_even_when_the_server_echoes_them(server, monkeypatch):
    monkeypatch.setenv("RLK_TEST_TOKEN", SENTINEL)
    target = fast(
        url=server.url("/leak") + "?token=${RLK_TEST_TOKEN}",
        headers={"X-Api-Key": "${RLK_TEST_TOKEN}"},
    )
    error = failure(target)
    text = f"{error} {error!r} {error.url} {error.reason}"
    assert SENTINEL not in text
    assert "HTTP 401" in text and "token=***" in text and "***" in error.reason
    assert error.status == 401 and error.attempts == 1


def test_literal_credentials_are_shown_as_stars_but_still_sent(server):
    target = fast(
        url=server.url("/echo").replace("http://", "http://alice:pw-LITERAL@")
        + "?access_token=tok-LITERAL&page=2",
        headers={"X-Api-Key": "key-LITERAL", "Accept": "application/json"},
        body={"query": "{query}", "api_key": "body-LITERAL"},
        doc_ids_path=None,
    )
    shown = repr(target)
    assert "LITERAL" not in shown
    assert target.headers == {"X-Api-Key": "***", "Accept": "application/json"}
    assert target.body == {"query": "{query}", "api_key": "***"}
    assert "alice:***@" in target.url and "access_token=***&page=2" in target.url
    ask(target, "q")
    seen = server.seen[-1]
    assert seen.headers["x-api-key"] == "key-LITERAL"
    assert seen.headers["authorization"].startswith("Basic ")  # user:pass@ becomes basic auth
    assert seen.params["access_token"] == "tok-LITERAL"
    assert seen.json == {"query": "q", "api_key": "body-LITERAL"}


def test_a_missing_or_empty_variable_is_an_error_naming_it(monkeypatch):
    monkeypatch.delenv("RLK_UNSET_VAR", raising=False)
    with pytest.raises(MissingEnvironmentVariable, match=r"RLK_UNSET_VAR is not set \(headers.A"):
        HttpTarget(headers={"A": "Bearer ${RLK_UNSET_VAR}"})
    monkeypatch.setenv("RLK_EMPTY_VAR", "")
    with pytest.raises(MissingEnvironmentVariable, match="RLK_EMPTY_VAR is empty"):
        HttpTarget(url="http://h/${RLK_EMPTY_VAR}")
    with pytest.raises(ConfigError, match="environment variable RLK_UNSET_VAR is not set"):
        load_plugin(TARGETS, "http", {"body": {"q": "{query}", "key": "${RLK_UNSET_VAR}"}})


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://u:p4ss@h.example/x", "https://u:***@h.example/x"),
        ("https://tok123@h.example/x", "https://***@h.example/x"),
        (
            "https://h/x?q=1&token=abc&API_KEY=k&sig=s",
            "https://h/x?q=1&token=***&API_KEY=***&sig=***",
        ),
        ("https://h/x?key=${K}&password=", "https://h/x?key=${K}&password="),
        ("https://${U}:${P}@h/x", "https://${U}:${P}@h/x"),
        ("https://h/x?keyword=cats&author=me", "https://h/x?keyword=cats&author=me"),
        ("http://[::1/x", "<unparseable url>"),
    ],
)
def test_redact_url(url, shown):
    assert redact_url(url) == shown


def test_secrets_are_redacted_in_every_encoding():
    secrets = Secrets.of(['a"b c', "ab"])
    assert secrets.redact('x a"b c y a\\"b c z a%22b%20c ab') == "x *** y *** z *** ***"


# ---- retries and faults ------------------------------------------------------------------------


class Waits:
    """Stands in for asyncio.sleep: records the waits, waits for nothing."""

    def __init__(self) -> None:
        self.seen: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.seen.append(seconds)


def recorded(target: HttpTarget) -> Waits:
    waits = Waits()
    target._caller._sleep = waits
    return waits


def test_500s_are_retried_until_an_answer_comes(server):
    server.fail(2, 500)
    target = fast(url=server.url("/simple"), retries=3, backoff=0.01)
    waits = recorded(target)
    response = ask(target, "q")
    assert response.metadata == {"status": 200, "attempts": 3}
    assert server.hits["/simple"] == 3
    assert len(waits.seen) == 2 and 0 <= waits.seen[0] <= 0.01 and 0 <= waits.seen[1] <= 0.02


def test_retry_after_is_honoured_in_seconds_and_as_a_date(server):
    server.fail(1, 429, retry_after="7")
    server.fail(1, 503, retry_after=format_datetime(datetime.now(UTC) - timedelta(hours=1)))
    target = fast(url=server.url("/simple"), backoff=100.0, max_wait=30.0)
    waits = recorded(target)
    assert ask(target, "q").metadata["attempts"] == 3
    assert waits.seen == [7.0, 0.0]


def test_a_retry_after_beyond_max_wait_stops_retrying(server):
    server.fail(5, 429, retry_after="120")
    target = fast(url=server.url("/simple"), max_wait=10.0)
    error = failure(target)
    assert server.hits["/simple"] == 1
    assert "HTTP 429" in str(error) and "Retry-After 120 s is more than max_wait 10 s" in str(error)


def test_persistent_5xx_fails_after_the_retries_with_the_last_status(server):
    server.fail(10, 503)
    error = failure(fast(url=server.url("/simple"), retries=2))
    assert server.hits["/simple"] == 3
    assert error.attempts == 3 and error.status == 503
    assert str(error).startswith(f"POST {server.url('/simple')} failed after 3 attempts: HTTP 503")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_other_4xx_are_not_retried(server, status):
    server.fail(5, status)
    error = failure(fast(url=server.url("/simple"), retries=3))
    assert server.hits["/simple"] == 1
    assert error.attempts == 1 and f"(not retried): HTTP {status}" in str(error)


def test_a_dropped_connection_is_retried(server):
    server.drop(2)
    response = ask(fast(url=server.url("/simple")), "q")
    assert response.metadata["attempts"] == 3 and server.hits["/simple"] == 3


def test_a_dropped_connection_every_time_fails_with_the_reason(server):
    server.drop(5)
    error = failure(fast(url=server.url("/simple"), retries=1))
    assert error.attempts == 2 and error.status is None
    assert "RemoteProtocolError" in error.reason or "ReadError" in error.reason


def test_a_hanging_server_times_out_after_the_retries(server):
    server.hang(3, seconds=3.0)
    error = failure(fast(url=server.url("/simple"), timeout=0.2, retries=2))
    assert server.hits["/simple"] == 3
    assert error.attempts == 3 and "timed out after 0.2 s (ReadTimeout)" in str(error)


def test_a_refused_connection_is_retried_then_reported():
    with FakeRagServer() as gone:
        url = gone.url("/simple")
    target = fast(url=url, retries=2)
    waits = recorded(target)
    error = failure(target)
    assert error.attempts == 3 and "ConnectError" in error.reason and len(waits.seen) == 2


def closed_url(scheme: str) -> str:
    """A loopback URL where nothing listens (a server's port, just closed)."""
    with FakeRagServer() as gone:
        port = gone.url("/").rsplit(":", 1)[1].split("/")[0]
    return f"{scheme}://127.0.0.1:{port}/simple"


@pytest.mark.parametrize("make", ["http", "openai-compatible"])
def test_a_refused_plain_http_connection_says_so_without_tls_words(make):
    url = closed_url("http")
    port = url.rsplit(":", 1)[1].split("/")[0]
    if make == "http":
        target: Any = fast(url=url, retries=0)
    else:
        target = OpenAICompatibleTarget(
            base_url=url.removesuffix("/simple"), model="m", retries=0, backoff=0.001
        )
    reason = failure(target).reason
    assert f"cannot connect to 127.0.0.1:{port} (plain HTTP): Connection refused" in reason
    for tls in ("ssl", "SSL", "TLS", "certificate"):
        assert tls not in reason


def test_a_refused_https_connection_keeps_its_tls_wording():
    reason = failure(fast(url=closed_url("https"), retries=0)).reason
    assert "ConnectError" in reason and "ssl" in reason and "plain HTTP" not in reason


@pytest.mark.parametrize(
    ("fault", "transport"),
    [
        ({"status": 401}, False),
        ({"status": 404}, False),
        ({"status": 500}, False),  # the system answered: it is reachable, just broken
        ({"status": 429}, False),
        ({"status": 502}, True),  # a gateway answered that the system is down
        ({"status": 503}, True),
        ({"status": 504}, True),
        ({"drop": True}, True),
        ({"hang": True}, True),
    ],
)
def test_transport_failure_says_whether_the_system_was_reached(server, fault, transport):
    if "status" in fault:
        server.fail(1, fault["status"])
    elif "drop" in fault:
        server.drop(1)
    else:
        server.hang(1, seconds=2.0)
    error = failure(fast(url=server.url("/simple"), retries=0, timeout=0.2))
    assert error.transport_failure is transport
    assert is_transport_failure(error) is transport
    assert error.status == fault.get("status")


def test_a_refused_connection_is_a_transport_failure():
    with FakeRagServer() as gone:
        url = gone.url("/simple")
    error = failure(fast(url=url, retries=0))
    assert error.status is None and error.transport_failure is True


def test_ingest_and_reset_failures_name_the_call(server, monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", SENTINEL)
    server.fail(1, 401, path="/ingest")
    server.fail(1, 500, path="/reset")
    target = fast(
        url=server.url("/simple"),
        ingest_url=server.url("/ingest"),
        reset_url=server.url("/reset"),
        headers={"Authorization": "Bearer ${RAG_TOKEN}"},
        retries=0,
    )
    with pytest.raises(TargetRequestError) as ingest:
        target.ingest(DOCS)
    assert str(ingest.value) == (
        f"ingest POST {server.url('/ingest')} failed after 1 attempt (not retried): "
        'HTTP 401 Unauthorized: {"error": "injected 401"}'
    )
    assert (ingest.value.call, ingest.value.transport_failure) == ("ingest", False)
    with pytest.raises(TargetRequestError) as reset:
        target.reset()
    assert str(reset.value).startswith(
        f"reset POST {server.url('/reset')} failed after 1 attempt: HTTP 500"
    )
    # a service that echoes the credentials it was sent: the excerpt is redacted
    leaky = fast(
        url=server.url("/simple"),
        ingest_url=server.url("/leak/ingest"),
        headers={"Authorization": "Bearer ${RAG_TOKEN}"},
    )
    with pytest.raises(TargetRequestError) as leak:
        leaky.ingest(DOCS)
    assert "HTTP 401 Unauthorized" in str(leak.value) and "Bearer ***" in str(leak.value)
    assert SENTINEL not in str(leak.value)
    target.close()
    leaky.close()


def test_the_sync_path_retries_too(server):
    server.fail(1, 502)
    server.drop(1)
    target = fast(url=server.url("/simple"))
    response = target.answer("q")
    target.close()
    assert response.metadata["attempts"] == 3


@given(st.integers(0, 80), st.floats(0, 10), st.floats(0, 100), st.randoms())
def test_backoff_is_full_jitter_under_a_capped_exponential(retry, backoff, cap, rng):
    wait = RetryPolicy(3, backoff, cap).backoff_delay(retry, rng)
    assert 0.0 <= wait <= min(cap, backoff * 2.0**retry)


def test_retry_after_parsing():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("3", now) == 3.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after("-4", now) == 0.0
    assert parse_retry_after("Thu, 01 Jan 2026 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("Thu, 01 Jan 2026 11:00:00 GMT", now) == 0.0
    for junk in (None, "", "soon", "nan", "inf"):
        assert parse_retry_after(junk, now) is None


# ---- ingest, reset and the in-process comparison ---------------------------------------------


def test_ingest_posts_every_document_in_batches_and_reset_forgets_them(server):
    docs = [Document(f"d{i}", f"word{i} shared text", "private", {"n": i}) for i in range(250)]
    target = fast(
        url=server.url("/simple"),
        ingest_url=server.url("/ingest"),
        reset_url=server.url("/reset"),
        ingest_batch_size=100,
    )

    async def go():
        await target.aingest(docs)
        before = await target.aanswer("word7")
        await target.areset()
        after = await target.aanswer("word7")
        await target.aclose()
        return before, after

    before, after = asyncio.run(go())
    assert server.ingested_batches == [100, 100, 50]
    first = next(s.json for s in server.seen if s.path == "/ingest")
    assert first["documents"][3] == {"doc_id": "d3", "text": "word3 shared text"}
    assert before.retrieved is not None and before.retrieved[0].doc_id == "d7"
    assert server.resets == 1 and after.retrieved == ()


@pytest.mark.parametrize(
    ("urls", "expected"),
    [
        ({}, ("fresh", False)),
        ({"reset_url": "/reset"}, ("fresh", False)),  # nothing planted: nothing to remove
        ({"ingest_url": "/ingest", "reset_url": "/reset"}, ("reset", True)),
        ({"ingest_url": "/ingest"}, ("shared", True)),
    ],
)
def test_isolation_follows_the_ingest_and_reset_urls(urls, expected):
    target = HttpTarget(**{k: "http://127.0.0.1:9" + path for k, path in urls.items()})
    assert (target.isolation, target.ingests) == expected
    assert isolation_of(target) == expected[0]


GROUND_TRUTH = {
    "poison_claim": "GT-POISON-CLAIM-1d2c",
    "true_claim": "GT-TRUE-CLAIM-8e4f",
    "target_query": "GT-TARGET-QUERY-5a6b",
    "sentinel": "GT-SENTINEL-3c7d",
}


@pytest.mark.parametrize("sync", [False, True])
def test_ingest_sends_only_ids_and_texts_never_the_ground_truth(server, sync):
    docs = [
        Document("p1", "Refunds now take ninety days.", "poison", GROUND_TRUTH),
        Document("l1", "Refunds take ten days.", "private", {"sentinel": "GT-SENTINEL-3c7d"}),
    ]
    target = fast(url=server.url("/simple"), ingest_url=server.url("/ingest"))
    if sync:
        target.ingest(docs)
        target.close()
    else:
        asyncio.run(_ingest_and_close(target, docs))
    (sent,) = [s for s in server.seen if s.path == "/ingest"]
    assert sent.json == {
        "documents": [
            {"doc_id": "p1", "text": "Refunds now take ninety days."},
            {"doc_id": "l1", "text": "Refunds take ten days."},
        ]
    }
    wire = json.dumps([attrs.asdict(s) for s in server.seen])
    for leaked in [*GROUND_TRUTH, *GROUND_TRUTH.values(), "poison", "private", "kind"]:
        assert leaked not in wire, leaked


def test_ingest_sends_a_document_s_access_and_nothing_else_of_its_metadata(server):
    # A real app knows who may see each document: without it, it could not enforce access.
    docs = [
        Document(
            "c1",
            "Contract worth EUR 20,000.",
            "private",
            {"access": {"groups": ["globex", "acme"]}, "sentinel": "GT-SENTINEL-3c7d"},
        ),
        Document("c2", "Salary letter.", "private", {"access": {"owner": "acme:bob"}}),
        Document("pub", "Public page."),
    ]
    target = fast(url=server.url("/simple"), ingest_url=server.url("/ingest"))
    target.ingest(docs)
    target.close()
    (sent,) = [s for s in server.seen if s.path == "/ingest"]
    assert sent.json == {
        "documents": [
            {
                "doc_id": "c1",
                "text": "Contract worth EUR 20,000.",
                "access": {"groups": ["acme", "globex"]},
            },
            {
                "doc_id": "c2",
                "text": "Salary letter.",
                "access": {"owner": "acme:bob", "groups": []},
            },
            {"doc_id": "pub", "text": "Public page."},
        ]
    }
    assert "GT-SENTINEL" not in json.dumps([attrs.asdict(s) for s in server.seen])


def test_a_malformed_access_is_an_input_error_before_anything_is_sent(server):
    target = fast(url=server.url("/simple"), ingest_url=server.url("/ingest"))
    bad = Document("c1", "text", "private", {"access": {"groups": "acme"}})
    with pytest.raises(InputError, match=r"document 'c1': \$\.metadata\.access\.groups"):
        target.ingest([bad])
    target.close()
    assert not [s for s in server.seen if s.path == "/ingest"]


async def _ingest_and_close(target: HttpTarget, docs: list[Document]) -> None:
    try:
        await target.aingest(docs)
    finally:
        await target.aclose()


def test_without_ingest_or_reset_urls_nothing_is_called(server):
    target = fast(url=server.url("/simple"))
    target.ingest(DOCS)
    target.reset()
    target.close()
    assert sum(server.hits.values()) == 0


def test_every_case_of_a_pack_gets_the_in_process_answer_over_http(server):
    pack = load_pack("sentinel-takeover-safe").obj
    documents = list(pack.documents())
    cases = list(pack.cases())[::5]
    local = ReferenceTarget()
    local.ingest(documents)
    target = fast(url=server.url("/rag"), ingest_url=server.url("/ingest"), **NESTED)

    async def go():
        gate = asyncio.Semaphore(16)

        async def one(query):
            async with gate:
                return await target.aanswer(query)

        await target.aingest(documents)
        try:
            return await asyncio.gather(*(one(c.query) for c in cases))
        finally:
            await target.aclose()

    remote = asyncio.run(go())
    assert len(remote) == len(cases) > 80
    for case, got in zip(cases, remote, strict=True):
        want = local.answer(case.query)
        assert got.answer == want.answer, case.test_id
        assert [(r.doc_id, r.text, r.score) for r in got.retrieved or ()] == [
            (r.doc_id, r.text, r.score) for r in want.retrieved or ()
        ], case.test_id


def _scores(run):
    return {r.test_id: (dict(r.values), r.error) for r in run.results}


def test_a_run_over_http_scores_like_the_in_process_run_and_errors_are_counted(server):
    pack = load_pack("relevance-hijack")
    options = {
        "url": server.url("/rag"),
        "ingest_url": server.url("/ingest"),
        "reset_url": server.url("/reset"),
        "backoff": 0.001,
        "retries": 10,  # more than all the faults together, so no case can run out
        **NESTED,
    }
    settings_ = RunSettings(concurrency=8, tags=("smoke",))
    reference = _scores(run_pack(pack, target_name="reference", settings=settings_))
    # Transient faults are absorbed by the retries: the same scores, case for case.
    server.fail(6, 500, path="/rag")
    server.drop(3, path="/rag")
    healed = run_pack(pack, target_name="http", target_options=options, settings=settings_)
    assert _scores(healed) == reference
    assert server.resets == 1
    # Without retries, each faulted case is recorded as errored, never dropped nor passed.
    server.fail(4, 503, path="/rag")
    broken = run_pack(
        pack, target_name="http", target_options={**options, "retries": 0}, settings=settings_
    )
    scores = _scores(broken)
    errored = {k for k, (_, error) in scores.items() if error is not None}
    assert len(scores) == len(reference) and len(errored) == 4
    assert all("HTTP 503" in str(scores[k][1]) for k in errored)
    assert {k: v for k, v in scores.items() if k not in errored} == {
        k: v for k, v in reference.items() if k not in errored
    }


# ---- the documentation -------------------------------------------------------------------------


def _fake_apps(monkeypatch) -> None:
    """The modules the python examples of docs/targets.md name."""
    package = types.ModuleType("myapp")
    package.__path__ = []
    rag = types.ModuleType("myapp.rag")
    rag.__dict__.update(
        answer=lambda query: {"answer": query, "sources": []},
        load_documents=lambda documents: None,
    )
    chains = types.ModuleType("myapp.chains")

    class Chain:
        input_keys = ("query",)

        def invoke(self, inputs):
            return {"result": inputs["query"], "source_documents": []}

    chains.__dict__.update(build_qa_chain=lambda k: Chain(), add_documents=lambda documents: None)
    for module in (package, rag, chains):
        monkeypatch.setitem(sys.modules, module.__name__, module)


def test_every_target_example_in_the_docs_builds(monkeypatch):
    text = (ROOT / "docs" / "targets.md").read_text(encoding="utf-8")
    examples = [
        tomllib.loads(block)
        for marker, block in re.findall(r"(<!-- [^\n]* -->\n)?```toml\n(.*?)```", text, re.S)
        if "[target]" in block and not marker.startswith("<!-- example: ")
    ]  # blocks after an ``<!-- example: -->`` marker import real apps: tests/apps runs them
    monkeypatch.setenv("RAG_API_TOKEN", SENTINEL)
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    _fake_apps(monkeypatch)
    built = [load_plugin(TARGETS, e["target"]["name"], e["target"]["options"]) for e in examples]
    assert sorted({p.name for p in built}) == ["http", "openai-compatible", "python"]
    assert len(built) == 7
    # The context-extraction example's protected text is its system prompt's fixed part.
    protected = [
        (e["target"]["options"]["system_prompt"], e["metrics"]["verbatim"]["texts"])
        for e in examples
        if "metrics" in e
    ]
    assert [(p.split("\n\n")[0],) == tuple(t) for p, t in protected] == [True]
    for e in examples:
        for name, options in e.get("metrics", {}).items():
            load_plugin("ragleaklab.metrics", name, options)
    for plugin in built:
        assert SENTINEL not in repr(plugin.obj) + json.dumps(plugin.options)


def test_the_docs_list_every_option_of_every_target():
    text = (ROOT / "docs" / "targets.md").read_text(encoding="utf-8")
    for cls in (HttpTarget, PythonTarget, OpenAICompatibleTarget):
        for a in attrs.fields(cls):
            if a.init:
                assert f"`{a.name}`" in text, f"{cls.__name__}.{a.name} is not documented"
