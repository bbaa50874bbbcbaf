"""Secrets never reach reports: redaction of plugin options and URLs."""

from __future__ import annotations

from ragleaklab_core._redact import REDACTED, redact, redact_url


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
