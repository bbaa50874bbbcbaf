"""The http target asks as a case's principal through ``{principal}`` in its templates."""

from __future__ import annotations

import asyncio
import json

import pytest
from ragleaklab_plugins.targets._template import render
from ragleaklab_plugins.targets.http import HttpTarget

from ragleaklab_core import Case, Document
from ragleaklab_core._discovery import TARGETS, LoadedPlugin
from ragleaklab_core.run.executor import TargetSession, principal_support
from ragleaklab_core.run.records import RunSettings

NESTED = {"answer_path": "data.answer", "doc_ids_path": "data.sources[*].id"}
DOCS = [Document("refund", "Refunds take ten business days after approval.")]


def _asked(target: HttpTarget, case: Case):
    session = TargetSession(LoadedPlugin(TARGETS, "http", "x:y", "x 1", target, {}), RunSettings())

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


def test_a_template_with_principal_errors_on_a_case_without_one(server):
    target = HttpTarget(url=server.url("/rag"), headers={"X-User": "{principal}"}, **NESTED)
    with pytest.raises(ValueError, match=r"header 'X-User' uses \{principal\} and the case has"):
        _asked(target, Case("c", "refunds?"))
    body = HttpTarget(url=server.url("/rag"), body={"q": "{query}", "u": "{principal}"}, **NESTED)
    with pytest.raises(ValueError, match=r"uses \{principal\} and the case has none"):
        _asked(body, Case("c", "refunds?"))
    assert server.seen == []  # nothing was sent with an empty principal


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
