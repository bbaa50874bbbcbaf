"""The checks of a pack's records: documents, cases, labels, and the references between them."""

from __future__ import annotations

from typing import Any

import attrs

from ragleaklab_core.contracts.metrics import metric_traits
from ragleaklab_core.errors import RagleaklabError
from ragleaklab_core.packs.manifest import (
    LABEL_SOURCES,
    _CaseRecord,
    _DocumentRecord,
)
from ragleaklab_core.packs.validation import limits
from ragleaklab_core.packs.validation.collector import _Collector, _one_line, _Record
from ragleaklab_core.packs.validation.report import (
    _LABELS,
    ValidationReport,
)
from ragleaklab_core.packs.validation.toml_lines import _key_path


@attrs.define
class _Checker(_Collector):
    """What a pack holds, read record by record, and the checks within a file and across them."""

    documents: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # doc_id -> (file, line)
    document_texts: list[str] = attrs.field(factory=list)
    #: The metric plugins the pack lists: each checks its own ground-truth keys.
    metric_names: list[str] = attrs.field(factory=list)
    document_files: list[str] = attrs.field(factory=list)
    documents_complete: bool = True
    cases: dict[str, tuple[str, int]] = attrs.field(factory=dict)  # test_id -> (file, line)
    case_records: list[_Record] = attrs.field(factory=list)
    cases_file: str | None = None
    cases_complete: bool = True
    labels: dict[str, tuple[str, int, bool]] = attrs.field(factory=dict)
    labels_file: str | None = None
    labels_complete: bool = True
    labelled: set[str] = attrs.field(factory=set)  # every test_id a label line names
    unsourced_labels: int = 0  # label lines with no label_source of their own
    # The system each label line says it was observed on (its `target`): the first line of each.
    label_targets: dict[str, tuple[str, int]] = attrs.field(factory=dict)
    n_documents: int = 0
    n_cases: int = 0

    def report(self) -> ValidationReport:
        positive = sum(1 for _f, _n, p in self.labels.values() if p)
        last = len(self.files)
        # Sorted by file (in reading order) and line; found order within a line (stable sort).
        ordered = sorted(self.problems, key=lambda p: (self.files.get(p.file, last), p.line))
        return ValidationReport(
            pack=self.pack,
            problems=tuple(ordered),
            n_documents=self.n_documents,
            n_cases=self.n_cases,
            n_positive=positive,
            n_negative=len(self.labels) - positive,
            warnings=tuple(self.warnings),
        )

    # -- documents, cases, labels --------------------------------------------------------------

    def document(self, record: _Record) -> None:
        self.n_documents += 1
        if self.n_documents == limits.MAX_DOCUMENTS + 1:
            self.add(record.file, record.line, "$", f"more than {limits.MAX_DOCUMENTS} documents")
        self.structured(record, _DocumentRecord)
        text = record.data.get("text")
        if isinstance(text, str):
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > limits.MAX_DOCUMENT_BYTES:
                self.add(
                    record.file,
                    record.line,
                    "$.text",
                    f"document text is {size} bytes, over the limit of {limits.MAX_DOCUMENT_BYTES}",
                )
            self.document_texts.append(text)
        doc_id = record.data.get("doc_id")
        if isinstance(doc_id, str) and doc_id:
            first = self.documents.get(doc_id)
            if first is not None:
                self.add(
                    record.file,
                    record.line,
                    "$.doc_id",
                    f"duplicate doc_id {doc_id!r} (first in {first[0]}:{first[1]})",
                )
            else:
                self.documents[doc_id] = (record.file, record.line)

    def case(self, record: _Record) -> None:
        self.n_cases += 1
        if self.n_cases == limits.MAX_CASES + 1:
            self.add(record.file, record.line, "$", f"more than {limits.MAX_CASES} cases")
        self.structured(record, _CaseRecord)
        test_id = record.data.get("test_id")
        if isinstance(test_id, str) and test_id:
            first = self.cases.get(test_id)
            if first is not None:
                self.add(
                    record.file,
                    record.line,
                    "$.test_id",
                    f"duplicate test_id {test_id!r} (first on line {first[1]})",
                )
            else:
                self.cases[test_id] = (record.file, record.line)
        self.case_records.append(record)

    def label(self, record: _Record) -> None:
        data, file, line = record.data, record.file, record.line
        test_id = data.get("test_id")
        label = data.get("label")
        ok = True
        if "test_id" not in data:
            self.add(file, line, "$", "missing field 'test_id'")
            ok = False
        elif not isinstance(test_id, str) or not test_id.strip():
            self.add(file, line, "$.test_id", f"must be a non-empty string, got {test_id!r}")
            ok = False
        if "label" not in data:
            self.add(file, line, "$", "missing field 'label'")
            ok = False
        elif not isinstance(label, str) or label not in _LABELS:
            self.add(file, line, "$.label", f'must be "positive" or "negative", got {label!r}')
            ok = False
        if isinstance(test_id, str):
            self.labelled.add(test_id)
        notes = data.get("notes")
        if notes is not None and not isinstance(notes, str):
            self.add(file, line, "$.notes", f"must be a string, got {notes!r}")
        # `ragleaklab label import` writes each label's provenance on its line.
        source = data.get("label_source")
        if source is None:
            self.unsourced_labels += 1
        elif source not in LABEL_SOURCES:
            self.add(
                file,
                line,
                "$.label_source",
                f"must be one of {', '.join(LABEL_SOURCES)}, got {source!r}",
            )
        # The system whose answers were labelled, on the line itself, so a copy of the file
        # still says it (`ragleaklab label import` writes it; the built-in packs' lines too).
        target = data.get("target")
        if target is not None:
            if not isinstance(target, str) or not target.strip():
                self.add(
                    file,
                    line,
                    "$.target",
                    "must name the system whose answers were labelled (a target identity "
                    f"such as reference@693fcdcd3a7c), got {target!r}",
                )
            else:
                self.label_targets.setdefault(target, (file, line))
        if not ok or not isinstance(test_id, str):
            return
        first = self.labels.get(test_id)
        if first is not None:
            self.add(
                file, line, "$.test_id", f"duplicate test_id {test_id!r} (first on line {first[1]})"
            )
            return
        self.labels[test_id] = (file, line, label == "positive")

    # -- checks across files --------------------------------------------------------------------

    def references(self) -> None:
        """Every document id and claim a case refers to exists in the pack's documents."""
        if not self.documents_complete:
            return  # a documents file could not be read: that problem is already listed
        where = ", ".join(self.document_files) or "the pack's documents"
        for record in self.case_records:
            truth = record.data.get("ground_truth")
            if not isinstance(truth, dict):
                continue
            for key in sorted(truth):
                value = truth[key]
                base = f"$.ground_truth{_key_path(key)}"
                if key.endswith("doc_ids"):
                    self._ids(record, base, value, where)
                elif key.endswith("doc_id"):
                    if not isinstance(value, str):
                        self.add(record.file, record.line, base, "must be a document id (string)")
                    elif value not in self.documents:
                        self.add(
                            record.file, record.line, base, f"no document {value!r} in {where}"
                        )
        self._metrics_ground_truth()

    def _metrics_ground_truth(self) -> None:
        """Each listed metric that declares ``check_ground_truth`` checks its own keys (the
        claim metric: every claim is stated by a document); the core knows none of them."""
        from ragleaklab_core._discovery import METRICS, plugin_class

        records = [r for r in self.case_records if isinstance(r.data.get("ground_truth"), dict)]
        truths = [r.data["ground_truth"] for r in records]
        for name in dict.fromkeys(self.metric_names):
            try:
                cls = plugin_class(METRICS, name)
            except RagleaklabError:
                continue  # an unknown or broken metric is listed already
            if not metric_traits(cls).check_ground_truth:
                continue
            check = cls.check_ground_truth
            try:
                for index, key, item, message in check(truths, list(self.document_texts)):
                    record = records[index]
                    path = f"$.ground_truth{_key_path(key)}"
                    if item is not None:
                        path += f"[{item}]"
                    self.add(record.file, record.line, path, message)
            except Exception as exc:
                file, line = (records[0].file, records[0].line) if records else ("metric", 1)
                self.add(
                    file,
                    line,
                    "$.ground_truth",
                    f"metric {name!r} could not check the ground truth: "
                    f"{type(exc).__name__}: {_one_line(exc)}",
                )

    def _ids(self, record: _Record, base: str, value: Any, where: str) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.add(record.file, record.line, base, "must be a list of document ids (strings)")
            return
        for i, doc_id in enumerate(value):
            if doc_id not in self.documents:
                self.add(
                    record.file, record.line, f"{base}[{i}]", f"no document {doc_id!r} in {where}"
                )

    def label_coverage(self) -> None:
        """Labels and cases match one to one, and both classes are present.

        A direction is checked only when the file it relies on was read whole: a line that is
        not JSON could have held the id that looks missing.
        """
        labels_file = self.labels_file
        if labels_file is None or not self.labels_complete:
            return
        cases_read = self.cases_complete and (self.cases_file not in self.broken)
        labels_read = labels_file not in self.broken
        if cases_read:
            cases_file = self.cases_file or "cases"
            for test_id, (file, line, _positive) in self.labels.items():
                if test_id not in self.cases:
                    self.add(file, line, "$.test_id", f"no case {test_id!r} in {cases_file}")
        if labels_read:
            for test_id, (file, line) in self.cases.items():
                if test_id not in self.labelled:
                    self.add(
                        file, line, "$.test_id", f"case {test_id!r} has no label in {labels_file}"
                    )
            # Calibration uses the labels of the pack's cases only.
            usable = [
                p for t, (_f, _n, p) in self.labels.items() if t in self.cases or not cases_read
            ]
            positive = sum(usable)
            for count, name, meaning in (
                (positive, "positive", "the attack succeeded"),
                (len(usable) - positive, "negative", "security held"),
            ):
                if count == 0 and (self.cases or not cases_read):  # no cases: said already
                    self.add(
                        labels_file,
                        1,
                        "$",
                        f"no {name} label ({name} = {meaning}); calibration needs both classes",
                    )

    def cross_checks(self) -> None:
        file = self.cases_file
        # An empty or unreadable cases file has said so already.
        if file is not None and self.cases_complete and self.n_cases == 0:
            said = any(p.file == file for p in self.problems)
            if not said:
                self.add(file, 1, "$", "the pack has no cases")
        self.references()
        self.label_coverage()
