"""Cut documents into overlapping windows of whole words."""

from __future__ import annotations

from attrs import frozen


@frozen
class Chunk:
    """One window of a document.

    Attributes:
        doc_id: The document's id.
        chunk_id: ``f"{doc_id}#{n}"``, n counting from 0 within the document.
        text: The window's words joined by single spaces.
    """

    doc_id: str
    chunk_id: str
    text: str


def window_starts(n_words: int, chunk_words: int, chunk_overlap: int) -> list[int]:
    """Where each window starts: every ``chunk_words - chunk_overlap`` words until one reaches
    the end. A document of at most *chunk_words* words (even an empty one) is one window."""
    step = chunk_words - chunk_overlap
    starts = [0]
    while starts[-1] + chunk_words < n_words:
        starts.append(starts[-1] + step)
    return starts


def chunk_document(doc_id: str, text: str, chunk_words: int, chunk_overlap: int) -> list[Chunk]:
    """Cut *text* (split on whitespace) into windows of *chunk_words* words sharing
    *chunk_overlap* words with the previous window."""
    words = text.split()
    return [
        Chunk(doc_id, f"{doc_id}#{n}", " ".join(words[start : start + chunk_words]))
        for n, start in enumerate(window_starts(len(words), chunk_words, chunk_overlap))
    ]
