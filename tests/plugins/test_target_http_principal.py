"""The http target asks as a case's principal through ``{principal}`` in its templates."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ragleaklab_plugins.targets._template import render
from ragleaklab_plugins.targets.http import HttpTarget

from ragleaklab_core import Case, Document
from ragleaklab_core._discovery import TARGETS, LoadedPlugin
from ragleaklab_core.run.executor import PackTarget
from ragleaklab_core.run.principal import principal_support
from ragleaklab_core.run.records import RunSettings

NESTED = {"answer_path": "data.answer", "doc_ids_path": "data.sources[*].id"}
DOCS = [Document("refund", "Refunds take ten business days after approval.")]


def _asked(target: HttpTarget, case: Case):
    session = PackTarget(LoadedPlugin(TARGETS, "http", "x:y", "x 1", target, {}), RunSettings())

    async def go():
        try:
            return await session.answer(case, 0)
        finally:
            await target.aclose()

    return asyncio.run(go())


def test_the_principal_goes_into_headers_body_and_params(server):
    target = HttpTarget(
        url=server.url("/rag"),
        headers={"X-User": "{principal}", "X-Tenant": "t-{principal}"},
        body={"query": "{query}", "as": {"user": "{principal}"}},
        params={"who": "{principal}"},
        **NESTED,
    )
    response = _asked(target, Case("c", "refunds?", principal="alice"))
    seen = server.seen[-1]
    assert seen.headers["x-user"] == "alice" and seen.headers["x-tenant"] == "t-alice"
    assert seen.json == {"query": "refunds?", "as": {"user": "alice"}}
    assert seen.params == {"who": "alice"}
    assert response.answer


def test_a_case_without_a_principal_leaves_out_every_value_that_holds_it(server):
    target = HttpTarget(
        url=server.url("/rag"),
        headers={"X-User": "{principal}", "X-Tenant": "t-{principal}", "X-App": "rlk"},
        body={
            "query": "{query}",
            "user": "user:{principal}",
            "as": {"user": "{principal}", "role": "reader", "deep": {"who": "{principal}"}},
            "tags": ["q", "{principal}", {"by": "{principal}"}, "by {principal} x"],
            "k": 5,
        },
        params={"who": "{principal}", "lang": "en"},
        **NESTED,
    )
    response = _asked(target, Case("c", "refunds by {principal}?"))
    [seen] = server.seen
    # left out whole, never sent empty ("") or cut ("t-", "user:"), at any depth
    assert "x-user" not in seen.headers and "x-tenant" not in seen.headers
    assert seen.headers["x-app"] == "rlk"
    assert seen.json == {
        "query": "refunds by {principal}?",  # the query's own text is data, never left out
        "as": {"role": "reader", "deep": {}},
        "tags": ["q", {}],
        "k": 5,
    }
    assert seen.params == {"lang": "en"}
    assert response.answer
    # the same target, asked as someone, sends every value
    _asked(target, Case("c", "refunds?", principal="alice"))
    asked = server.seen[-1]
    assert (asked.headers["x-user"], asked.headers["x-tenant"]) == ("alice", "t-alice")
    assert asked.json["user"] == "user:alice" and asked.json["tags"][1:3] == [
        "alice",
        {"by": "alice"},
    ]
    assert asked.params == {"who": "alice", "lang": "en"}


def test_ingest_and_reset_are_asked_as_nobody(server):
    target = HttpTarget(
        url=server.url("/rag"),
        headers={"X-User": "{principal}", "X-App": "rlk"},
        ingest_url=server.url("/ingest"),
        reset_url=server.url("/reset"),
        **NESTED,
    )
    target.ingest(DOCS)
    target.reset()
    target.close()
    assert [s.path for s in server.seen] == ["/ingest", "/reset"]
    for seen in server.seen:
        assert "x-user" not in seen.headers and seen.headers["x-app"] == "rlk"
        assert "{principal}" not in json.dumps(seen.json)


def test_a_case_with_a_principal_errors_when_no_template_sends_it(server):
    target = HttpTarget(url=server.url("/rag"), **NESTED)
    with pytest.raises(ValueError, match=r"http target cannot ask as a principal"):
        _asked(target, Case("c", "refunds?", principal="alice"))
    get = HttpTarget(
        url=server.url("/rag"), method="GET", params={"q": "{query}"}, body={"u": "{principal}"}
    )
    with pytest.raises(ValueError, match=r"cannot ask as a principal"):  # GET sends no body
        _asked(get, Case("c", "refunds?", principal="alice"))
    assert server.seen == []
    assert _asked(HttpTarget(url=server.url("/rag"), **NESTED), Case("c", "refunds?")).answer


def test_a_principal_with_a_line_break_never_reaches_a_header(server):
    target = HttpTarget(url=server.url("/rag"), headers={"X-User": "{principal}"}, **NESTED)
    with pytest.raises(ValueError, match="control character"):
        _asked(target, Case("c", "q", principal="alice\r\nX-Admin: 1"))
    assert server.seen == []


# String values with and without the placeholders, inside larger strings too.
_strings = st.lists(
    st.sampled_from(["{principal}", "{query}", "user:", "x", " ", "{", "}", "principal"]),
    max_size=4,
).map("".join)
_templates = st.recursive(
    st.none() | st.booleans() | st.integers() | _strings,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "user", "{principal}"]), inner, max_size=4)
    ),
    max_leaves=15,
)


def _holds_principal(value: object) -> bool:
    return isinstance(value, str) and "{principal}" in value


def _without_principal(template: object) -> object:
    """The rule docs/targets.md states: every string value holding {principal} is left out of
    its object or list, at any depth; nothing else changes."""
    if isinstance(template, dict):
        return {k: _without_principal(v) for k, v in template.items() if not _holds_principal(v)}
    if isinstance(template, list):
        return [_without_principal(v) for v in template if not _holds_principal(v)]
    return template


@given(st.dictionaries(st.sampled_from(["q", "u", "as"]), _templates), _strings, st.text())
def test_an_anonymous_case_sends_the_template_with_the_principal_values_left_out(
    template, query, someone
):
    anonymous = render(template, query, None)
    kept = _without_principal(template)
    # exactly the values holding {principal} are gone, the rest rendered as for anyone
    assert anonymous == render(kept, query, someone or "x")
    json.dumps(anonymous)  # a plain JSON value: no marker of what was left out survives
    # and asked as someone, nothing is left out: the same shape as the template
    assert _shape(render(template, query, someone or "x")) == _shape(template)


def _shape(value: object) -> object:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


def test_a_template_that_is_only_the_principal_cannot_be_left_out():
    with pytest.raises(ValueError, match="nothing is left to send"):
        render("by {principal}", "q", None)


def test_placeholders_are_replaced_in_one_pass():
    # A query that holds the text {principal} stays as written, and so does a principal
    # that holds {query}: an inserted value is never scanned again.
    assert render({"q": "{query} by {principal}"}, "say {principal}", "{query}") == {
        "q": "say {principal} by {query}"
    }


def test_the_openai_compatible_target_reports_the_principal_and_never_sends_it(server):
    from ragleaklab_plugins.targets.openai_compatible import OpenAICompatibleTarget

    def make():
        target = OpenAICompatibleTarget(base_url=server.url("/v1"), model="tiny", backoff=0.001)
        target.ingest(DOCS)
        return target

    anonymous = _asked(make(), Case("c", "refunds?"))
    anonymous_body = server.seen[-1].json
    asked = _asked(make(), Case("c", "refunds?", principal="tenant-7"))
    assert server.seen[-1].json == anonymous_body  # the same request: the model never sees it
    assert "tenant-7" not in str(server.seen[-1].headers)
    assert asked.metadata == {**anonymous.metadata, "principal": "tenant-7"}
    assert "principal" not in anonymous.metadata


def test_the_http_target_declares_whether_a_template_sends_the_principal(server):
    assert HttpTarget(url=server.url("/rag"), **NESTED).carries_principal is False
    sends = HttpTarget(url=server.url("/rag"), headers={"X-User": "{principal}"}, **NESTED)
    assert sends.carries_principal is True
    assert principal_support(sends) is True
    assert principal_support(HttpTarget(url=server.url("/rag"), **NESTED)) is False


def test_the_openai_compatible_target_filters_retrieval_by_access_and_the_model_sees_only_that(
    server,
):
    from ragleaklab_plugins.targets.openai_compatible import OpenAICompatibleTarget

    docs = [
        Document("acme-refunds", "Acme refunds take ten business days.", "private",
                 {"access": {"groups": ["acme"]}}),
        Document("globex-refunds", "Globex refunds take forty business days.", "private",
                 {"access": {"groups": ["globex"]}}),
    ]  # fmt: skip

    def asked(access_filter, principal):
        target = OpenAICompatibleTarget(
            base_url=server.url("/v1"), model="tiny", backoff=0.001, access_filter=access_filter
        )
        target.ingest(docs)
        response = _asked(target, Case("c", "How long do refunds take?", principal=principal))
        return [r.doc_id for r in response.retrieved or ()], json.dumps(server.seen[-1].json)

    ids, sent = asked("none", "acme:alice")  # the naive shared index: the leak
    assert set(ids) == {"acme-refunds", "globex-refunds"} and "Globex" in sent
    for access_filter in ("tenant", "acl"):
        ids, sent = asked(access_filter, "acme:alice")
        assert ids == ["acme-refunds"]
        assert "Globex" not in sent and "globex" not in sent and "acme:alice" not in sent
    ids, sent = asked("acl", "globex:bob")
    assert ids == ["globex-refunds"] and "Acme" not in sent
