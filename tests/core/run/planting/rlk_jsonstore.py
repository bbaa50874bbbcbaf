"""A LangChain-shaped vector store whose documents outlive the process: one JSON file per id.

The python target's app in tests/core/run/test_planted_ownership.py (``callable =
"rlk_jsonstore:store"``): it has what the target reads from a LangChain store (``add_texts``,
``get_by_ids``, ``delete``, ``similarity_search``, a ``collection_name`` and a
``persist_directory`` that name it), and none of LangChain. The directory is
``$RLK_JSONSTORE``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

WORD = re.compile(r"[a-z0-9]+")


class Doc:
    def __init__(self, text: str, metadata: dict, id: str) -> None:
        self.page_content = text
        self.metadata = metadata
        self.id = id


class JsonVectorStore:
    def __init__(self, persist_directory: str, collection_name: str = "kb") -> None:
        self.persist_directory = persist_directory
        self.collection_name = collection_name

    def _path(self, i: str) -> Path:
        return Path(self.persist_directory) / f"{i}.json"

    def add_texts(self, texts, metadatas=None, *, ids=None):
        Path(self.persist_directory).mkdir(parents=True, exist_ok=True)
        for text, meta, i in zip(texts, metadatas, ids, strict=True):
            self._path(i).write_text(json.dumps({"text": text, "metadata": meta}), "utf-8")
        return list(ids)

    def get_by_ids(self, ids, /):
        found = []
        for i in ids:
            path = self._path(i)
            if path.is_file():
                body = json.loads(path.read_text("utf-8"))
                found.append(Doc(body["text"], body["metadata"], id=i))
        return found

    def delete(self, ids=None):
        for i in ids:
            self._path(i).unlink(missing_ok=True)
        return True

    def similarity_search(self, query, k=4):
        words = set(WORD.findall(query.lower()))
        docs = self.get_by_ids([p.stem for p in sorted(Path(self.persist_directory).glob("*"))])
        docs.sort(key=lambda d: -len(words & set(WORD.findall(d.page_content.lower()))))
        return docs[:k]


store = JsonVectorStore(os.environ.get("RLK_JSONSTORE", "jsonstore"))
