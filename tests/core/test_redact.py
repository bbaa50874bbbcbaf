"""Secrets never reach reports: redaction of plugin options and URLs."""

from __future__ import annotations

import json

import pytest

from ragleaklab_core._redact import (
    REDACTED,
    forget_secrets,
    is_secret_key,
    is_secret_name,
    redact,
    redact_text,
    redact_url,
    register_secret,
)


def test_credential_keys_are_redacted_at_any_depth_but_env_references_are_kept():
    options = {
        "url": "https://user:hunter2@rag.example/api?token=abc&q=1",
        "headers": {"Authorization": "Bearer s3cr3t", "X-Api-Key": "${RAG_KEY}", "Accept": "json"},
        "api_key": "sk-live",
        "timeout": 3,
        "nested": [{"password": "pw"}],
    }
    out = redact(options)
    assert out["headers"] == {
        "Authorization": REDACTED,
        "X-Api-Key": "${RAG_KEY}",
        "Accept": "json",
    }
    assert out["api_key"] == REDACTED and out["timeout"] == 3
    assert out["nested"] == [{"password": REDACTED}]
    assert "hunter2" not in out["url"] and "abc" not in out["url"] and "q=1" in out["url"]
    assert options["api_key"] == "sk-live"  # the input is not modified


def test_urls_without_secrets_are_unchanged():
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
    assert redact_url("not a url") == "not a url"


SECRET_NAMES = [
    "key", "KEY", "api_key", "apiKey", "X-Api-Key", "x-api-key", "apikey", "access_key",
    "sig", "X-Amz-Signature", "X-Goog-Signature", "signature", "X-Amz-Credential",
    "X-Amz-Security-Token", "access_token", "Authorization", "Proxy-Authorization", "auth",
    "password", "passwd", "pwd", "db_pwd", "pass", "client_secret", "private_key", "Cookie",
    "session", "code", "subscription-key", "Ocp-Apim-Subscription-Key",
]  # fmt: skip
HARMLESS_NAMES = [
    "keyword", "keywords", "monkey", "keys", "hotkey_count", "signal", "design", "author",
    "passage", "bypass", "compass", "q", "query", "Accept", "Content-Type", "top_k", "model",
    "url", "codec", "barcode_format",
]  # fmt: skip


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_credential_names_are_secret(name):
    assert is_secret_name(name)
    assert redact({name: "s3cr3t-value"}) == {name: REDACTED}


@pytest.mark.parametrize("name", HARMLESS_NAMES)
def test_harmless_names_that_contain_a_secret_word_are_not_secret(name):
    assert not is_secret_name(name)
    assert redact({name: "plain"}) == {name: "plain"}


def test_the_network_targets_use_the_same_rule():
    from ragleaklab_plugins.targets import _net

    assert _net.is_secret_name is is_secret_name and _net.redact_url is redact_url
    assert is_secret_key is is_secret_name  # the former name keeps working


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://h/q?key=AIzaSy123&keyword=rag", "https://h/q?key=***&keyword=rag"),
        ("https://h/q?monkey=1&q=x", "https://h/q?monkey=1&q=x"),
        (
            "https://b.s3.amazonaws.com/o?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=abc123&x=1",
            "https://b.s3.amazonaws.com/o?X-Amz-Credential=***&X-Amz-Signature=***&x=1",
        ),
        (
            "https://storage.googleapis.com/b/o?X-Goog-Signature=ff00",
            "https://storage.googleapis.com/b/o?X-Goog-Signature=***",
        ),
        (
            "https://acct.blob.core.windows.net/c/b?sv=2020&sig=AbC%3D",
            "https://acct.blob.core.windows.net/c/b?sv=2020&sig=***",
        ),
        ("https://h/q?pwd=hunter2&user=bob", "https://h/q?pwd=***&user=bob"),
        ("https://h/q?api_key=${RAG_KEY}", "https://h/q?api_key=${RAG_KEY}"),
        ("https://tok3n@h/q", "https://***@h/q"),
    ],
)
def test_redact_url_hides_credential_params_and_keeps_the_rest_as_written(url, shown):
    assert redact_url(url) == shown


def test_env_references_stay_visible_and_literal_secrets_do_not():
    options = {
        "headers": {
            "Authorization": "Bearer ${RAG_TOKEN}",
            "X-Api-Key": "${RAG_KEY}",
            "Cookie": "session=abc123",
        },
        "params": {"key": "${RAG_KEY}", "sig": "literal-sig"},
    }
    assert redact(options) == {
        "headers": {
            "Authorization": "Bearer ${RAG_TOKEN}",
            "X-Api-Key": "${RAG_KEY}",
            "Cookie": REDACTED,
        },
        "params": {"key": "${RAG_KEY}", "sig": REDACTED},
    }


def test_registered_secrets_are_hidden_in_any_text_in_every_encoding():
    secret = "tok/en+value with space"
    register_secret(secret)
    try:
        for form in (secret, "tok%2Fen%2Bvalue%20with%20space", json.dumps(secret)[1:-1]):
            assert redact_text(f"sent {form}!") == f"sent {REDACTED}!"
        assert redact({"note": f"x {secret}"}) == {"note": f"x {REDACTED}"}
        line = 'HTTP Request: POST http://h:1/q?api_key=k-123&q=a "HTTP/1.1 200 OK"'
        assert (
            redact_text(line) == 'HTTP Request: POST http://h:1/q?api_key=***&q=a "HTTP/1.1 200 OK"'
        )
    finally:
        forget_secrets()
    assert redact_text(f"sent {secret}") == f"sent {secret}"
