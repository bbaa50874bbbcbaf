"""Text from a system under test is made well-formed Unicode once, where ragleaklab receives it.

A Python ``str`` can hold a lone surrogate (U+D800-U+DFFF without its pair): an HTTP service may
legally send the JSON escape ``"\\ud800"``, which ``json`` decodes to one, and a python-target
app may return one. No UTF-8 writer accepts it (``UnicodeEncodeError``), so such an answer
would crash the journal, ``runs.jsonl``, ``report.json``, a recording, a rendering or the
console, and end the run with a traceback.

The policy (one rule, :func:`well_formed`): every lone surrogate becomes U+FFFD (the
replacement character), and a surrogate pair written as two code points becomes the character
it encodes. It is applied to the target's response (answer, retrieved texts and ids, metadata)
before any metric scores it and before it is recorded, so the metrics score exactly the text
that is written and a replay of the recording scores it again the same way; the record lists
the fields altered in ``repaired``, as ``masked`` lists those where a secret was hidden.
Every plugin error message, log line and command-line error is made well-formed where it is
redacted (:func:`ragleaklab_core._redact.redact_text`), on its way out.

Input files (packs, labels) are not repaired: a lone surrogate there is an input error naming
the file, the line and the ``$.path`` (:func:`lone_surrogate_path`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from ragleaklab_core.values import Response, RetrievedDocument

#: A surrogate code point: in a well-formed str, none is left.
_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """*text* with every lone surrogate as U+FFFD and every surrogate pair joined; *text*
    itself when it holds no surrogate (the common case costs one scan)."""
    if _SURROGATE.search(text) is None:
        return text
    # Through UTF-16, surrogates allowed in: a pair decodes to its character, a lone one to
    # U+FFFD (the decoder's "replace"), whatever its neighbours.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def repair(value: Any) -> tuple[Any, bool]:
    """*value* (a str or JSON-like structure of them, keys included) made well-formed, and
    whether anything was altered. Containers are rebuilt only when something changed."""
    changed = False

    def walk(item: Any) -> Any:
        nonlocal changed
        if isinstance(item, str):
            fixed = well_formed(item)
            changed = changed or fixed is not item
            return fixed
        if isinstance(item, Mapping):
            return {walk(k): walk(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return type(item)(walk(v) for v in item)
        return item

    repaired = walk(value)
    return (repaired, True) if changed else (value, False)


def repair_response(response: Response) -> tuple[Response, tuple[str, ...]]:
    """*response* made well-formed, and the parts altered (``answer``, ``retrieved``,
    ``target_metadata``: the names a record's fields go by). *response* itself when none was."""
    answer, answer_changed = repair(response.answer)
    retrieved: tuple[RetrievedDocument, ...] | None = response.retrieved
    retrieved_changed = False
    if retrieved is not None:
        fixed = []
        for doc in retrieved:
            parts, changed = repair((doc.doc_id, doc.text, doc.chunk_id))
            if changed:
                retrieved_changed = True
                doc = attrs.evolve(doc, doc_id=parts[0], text=parts[1], chunk_id=parts[2])
            fixed.append(doc)
        retrieved = tuple(fixed)
    metadata, metadata_changed = repair(response.metadata)
    altered = tuple(
        name
        for name, changed in (
            ("answer", answer_changed),
            ("retrieved", retrieved_changed),
            ("target_metadata", metadata_changed),
        )
        if changed
    )
    if not altered:
        return response, ()
    return Response(answer, retrieved, metadata), altered


def lone_surrogate_path(value: Any, path: str = "$") -> str | None:
    """The ``$.path`` of the first string (or key) in *value* holding a surrogate, or None."""
    if isinstance(value, str):
        return path if _SURROGATE.search(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and _SURROGATE.search(key):
                return f"{path}.{well_formed(key)}"
            found = lone_surrogate_path(item, f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = lone_surrogate_path(item, f"{path}[{index}]")
            if found is not None:
                return found
    return None


#: The message of an input file's line holding a lone surrogate (JSON ``\\ud800``-style escape).
LONE_SURROGATE = (
    "holds a lone surrogate (a \\ud800-\\udfff escape without its pair): not Unicode text"
)

__all__ = ["LONE_SURROGATE", "lone_surrogate_path", "repair", "repair_response", "well_formed"]
