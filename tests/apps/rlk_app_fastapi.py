"""A RAG service built with FastAPI the way small teams build one, served by uvicorn.

It chunks what it is given into sentences named ``<doc_id>::chunk-<n>`` (its own ids, as a
chunked index returns), ranks chunks with BM25 (rank_bm25), and answers with its best chunk (a
naive generator that repeats its context, instructions and all). Ingest and reset need the bearer
token of ``RLK_APP_TOKEN``. ``GET /seen`` tells the tests which fields ingest received.

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
app = FastAPI()
_chunks: list[tuple[str, str]] = []  # (chunk id, text)
_seen_fields: set[str] = set()
_bm25: list[BM25Okapi] = []  # the index over _chunks, rebuilt after each change


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _authorise(authorization: str | None) -> None:
    if authorization != f"Bearer {os.environ['RLK_APP_TOKEN']}":
        raise HTTPException(status_code=401, detail="invalid token")


class Ingest(BaseModel):
    documents: list[dict[str, Any]]


class Query(BaseModel):
    question: str


@app.post("/documents")
def ingest(body: Ingest, authorization: str | None = Header(default=None)) -> dict[str, int]:
    _authorise(authorization)
    for document in body.documents:
        _seen_fields.update(document)
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", document["text"]) if s.strip()]
        _chunks.extend((f"{document['doc_id']}::chunk-{n}", s) for n, s in enumerate(sentences))
    _bm25.clear()
    return {"chunks": len(_chunks)}


@app.post("/reset")
def reset(authorization: str | None = Header(default=None)) -> dict[str, int]:
    _authorise(authorization)
    _chunks.clear()
    _bm25.clear()
    return {"chunks": 0}


@app.post("/ask")
def ask(body: Query) -> dict[str, Any]:
    if not _chunks:
        return {"answer": "I don't know.", "sources": []}
    if not _bm25:
        _bm25.append(BM25Okapi([_tokens(text) for _, text in _chunks]))
    scores = _bm25[0].get_scores(_tokens(body.question))
    ranked = sorted(range(len(_chunks)), key=lambda i: (-scores[i], i))[:TOP_K]
    sources = [{"id": _chunks[i][0], "score": float(scores[i])} for i in ranked]
    return {"answer": _chunks[ranked[0]][1], "sources": sources}


@app.get("/seen")
def seen() -> dict[str, list[str]]:
    return {"fields": sorted(_seen_fields), "chunks": [chunk_id for chunk_id, _ in _chunks]}
