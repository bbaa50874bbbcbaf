"""A RAG service built with FastAPI the way small teams build one, served by uvicorn.

It chunks what it is given into sentences named ``<doc_id>::chunk-<n>`` (its own ids, as a
chunked index returns), ranks chunks with BM25 (rank_bm25), and answers with its best chunk (a
naive generator that repeats its context, instructions and all). Every call but ``/seen`` needs
the bearer token of ``RLK_APP_TOKEN``. ``GET /seen`` tells the tests which fields ingest
received and which ``X-User`` values the questions came with.

Who asks is the ``X-User`` header (``<tenant>:<user>``; no header: an anonymous user), and who
may see a document is the ``access`` ingest received with it (docs/packs.md: an owner and
groups; a user is in the group of its tenant; no ``access``: public). ``RLK_APP_ACCESS``, read
at start-up, decides what the service does with them: ``ignore`` (the default: one shared index,
the cross-tenant leak of many real apps) or ``enforce`` (retrieval skips every chunk the asker
may not see before the top-k cut, as a tenant filter on the index does).

Run by the tests as ``python -m uvicorn rlk_app_fastapi:app`` in its own process.
"""

from __future__ import annotations

import os
import re
from typing import Any

from fastapi import FastAPI, Header, HTTPException
from pydantic import BaseModel
from rank_bm25 import BM25Okapi

TOP_K = 5
ENFORCE = {"ignore": False, "enforce": True}[os.environ.get("RLK_APP_ACCESS", "ignore")]
app = FastAPI()
_chunks: list[tuple[str, str]] = []  # (chunk id, text)
_access: dict[str, dict[str, Any]] = {}  # doc id -> its access, for restricted documents
_seen_fields: set[str] = set()
_seen_users: dict[str, int] = {}  # X-User value ("" when the header was empty) -> questions
_anonymous: list[int] = [0]  # questions without an X-User header
_bm25: list[BM25Okapi] = []  # the index over _chunks, rebuilt after each change


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _authorise(authorization: str | None) -> None:
    if authorization != f"Bearer {os.environ['RLK_APP_TOKEN']}":
        raise HTTPException(status_code=401, detail="invalid token")


def _may_see(user: str | None, chunk_id: str) -> bool:
    access = _access.get(chunk_id.partition("::")[0])
    if access is None:
        return True  # a public document
    if user is None:
        return False  # an anonymous user sees public documents only
    groups = {user.partition(":")[0]} if ":" in user else set()
    return access.get("owner") == user or bool(groups & set(access.get("groups", [])))


class Ingest(BaseModel):
    documents: list[dict[str, Any]]


class Query(BaseModel):
    question: str


@app.post("/documents")
def ingest(body: Ingest, authorization: str | None = Header(default=None)) -> dict[str, int]:
    _authorise(authorization)
    for document in body.documents:
        _seen_fields.update(document)
        if "access" in document:
            _access[document["doc_id"]] = document["access"]
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", document["text"]) if s.strip()]
        _chunks.extend((f"{document['doc_id']}::chunk-{n}", s) for n, s in enumerate(sentences))
    _bm25.clear()
    return {"chunks": len(_chunks)}


@app.post("/reset")
def reset(authorization: str | None = Header(default=None)) -> dict[str, int]:
    _authorise(authorization)
    _chunks.clear()
    _access.clear()
    _bm25.clear()
    return {"chunks": 0}


@app.post("/ask")
def ask(
    body: Query,
    authorization: str | None = Header(default=None),
    x_user: str | None = Header(default=None),
) -> dict[str, Any]:
    _authorise(authorization)
    if x_user is None:
        _anonymous[0] += 1
    else:
        _seen_users[x_user] = _seen_users.get(x_user, 0) + 1
    visible = [
        i for i, (chunk_id, _) in enumerate(_chunks) if not ENFORCE or _may_see(x_user, chunk_id)
    ]
    if not visible:
        return {"answer": "I don't know.", "sources": []}
    if not _bm25:
        _bm25.append(BM25Okapi([_tokens(text) for _, text in _chunks]))
    scores = _bm25[0].get_scores(_tokens(body.question))
    ranked = sorted(visible, key=lambda i: (-scores[i], i))[:TOP_K]
    sources = [{"id": _chunks[i][0], "score": float(scores[i])} for i in ranked]
    return {"answer": _chunks[ranked[0]][1], "sources": sources}


@app.get("/seen")
def seen() -> dict[str, Any]:
    return {
        "fields": sorted(_seen_fields),
        "chunks": [chunk_id for chunk_id, _ in _chunks],
        "users": dict(sorted(_seen_users.items())),
        "anonymous": _anonymous[0],
    }
