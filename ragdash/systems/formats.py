"""Reading a RAG system's results file into records: per question, the contexts it retrieved in
rank order and, where the file has it, its answer.

Three formats, told apart by their content (`detect`; `--system-format` forces one):

- **ragas**: RAGAS-style records (JSONL, a JSON list, CSV, Parquet, .xlsx), one per question:
  `user_input` (or `question`), `retrieved_contexts` (or `contexts`: a list of texts in rank
  order), optional `response` (or `answer`), `reference` (or `ground_truth`),
  `reference_contexts`, `retrieved_context_ids`, and an `id` (or `qid`, `question_id`).
- **trec**: a TREC run file, `qid Q0 docid rank score tag` per line: document ids (the corpus's
  `doc_id`, standing for the whole document, or the run's chunk ids) resolved against the run's
  corpus later (`ragdash.systems.store.resolve`).
- **spans**: OpenInference spans as Phoenix exports them (`get_spans_dataframe()` saved as
  Parquet or JSONL): per trace, the RETRIEVER spans' `retrieval.documents` (a reranker's
  output documents when there is one) are the contexts, the last LLM span's output (else the
  root CHAIN span's) the answer, the root span's input (else the retriever's) the question.

Every problem names the file, the record (`line N`, `row N`, `trace T (row N)`) and the field.
A record that cannot be read stops the file (DataError): a system scored on part of its file
without saying so would mislead."""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceSpanKindValues,
    RerankerAttributes,
    SpanAttributes,
)

from ragdash.data.common import MAX_CHARS
from ragdash.data.reading import RawFile, decode, fatal, read_file
from ragdash.data.schema import DataError, Issue
from ragdash.systems.settings import FORMATS
from ragdash.terminal import name as shown

MAX_CONTEXTS = 1_000
"""The most contexts one record may hold (a TREC run's usual depth)."""
MAX_CONTEXT_CHARS = 1_000_000
"""The longest one context may be, in characters."""
MAX_RECORD_CHARS = 5_000_000
"""The most characters of context one record may hold in all."""
ERRORS_SHOWN = 5
"""Records named in the error of a file with bad records."""

RAGAS_FIELDS: dict[str, tuple[str, ...]] = {
    "question": ("user_input", "question", "query"),
    "contexts": ("retrieved_contexts", "contexts"),
    "answer": ("response", "answer"),
    "reference": ("reference", "ground_truth", "ground_truths"),
    "reference_contexts": ("reference_contexts",),
    "context_ids": ("retrieved_context_ids",),
    "id": ("id", "qid", "question_id", "query_id"),
}
"""Each field of a RAGAS-style record and the names it goes by, the current RAGAS name first
(`SingleTurnSample`), then RAGAS 0.1's (`question`, `contexts`, `answer`, `ground_truth`)."""

A = "attributes."
KIND_COLUMNS = ("span_kind", A + SpanAttributes.OPENINFERENCE_SPAN_KIND)
TRACE_COLUMNS = ("context.trace_id", "trace_id")
SPAN_COLUMNS = ("context.span_id", "span_id")
PARENT_COLUMNS = ("parent_id", "context.parent_id", "parent_span_id")
INPUT = A + SpanAttributes.INPUT_VALUE
OUTPUT = A + SpanAttributes.OUTPUT_VALUE
DOCUMENTS = A + SpanAttributes.RETRIEVAL_DOCUMENTS
RERANKED = A + RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS
MESSAGES = A + SpanAttributes.LLM_OUTPUT_MESSAGES
CONTENT, DOC_ID, DOC_SCORE = (DocumentAttributes.DOCUMENT_CONTENT, DocumentAttributes.DOCUMENT_ID,
                              DocumentAttributes.DOCUMENT_SCORE)
RETRIEVER, RERANKER, LLM, CHAIN = (OpenInferenceSpanKindValues.RETRIEVER.value,
                                   OpenInferenceSpanKindValues.RERANKER.value,
                                   OpenInferenceSpanKindValues.LLM.value,
                                   OpenInferenceSpanKindValues.CHAIN.value)
QUESTION_KEYS = ("user_input", "question", "query", "input", "text", "content")
ANSWER_KEYS = ("response", "answer", "result", "output", "output_text", "text", "content")
"""Keys that hold the text when a span's input or output value is a JSON object."""

TREC_LINE = re.compile(r"^\S+\s+\S+\s+\S+\s+[+-]?\d+\s+\S+\s+\S+\s*$")


@dataclass(frozen=True)
class SystemRecord:
    """One question's results in a system's file: where it is (`record`), the question as the
    file gives it (`questions`: candidates, best first; spans give the user's input and the
    retriever's query) and its id if any, the contexts in rank order (`contexts`, texts; a TREC
    file gives `refs`, document or chunk ids, and each one's line in `ref_records`), the
    system's own id and score of each context where given, and its answer, gold answer and gold
    contexts where given."""

    record: str
    questions: tuple[str, ...] = ()
    qid: str | None = None
    contexts: tuple[str, ...] = ()
    refs: tuple[str, ...] = ()
    ref_records: tuple[str, ...] = ()
    context_ids: tuple[str | None, ...] = ()
    scores: tuple[float | None, ...] = ()
    answer: str | None = None
    reference: str | None = None
    reference_contexts: tuple[str, ...] = ()


@dataclass
class SystemFile:
    """A system's file read: its path, the format it was read in, its records in file order and
    the warnings met (each located)."""

    path: str
    format: str
    records: list[SystemRecord]
    warnings: list[Issue] = field(default_factory=list)


class Bad(ValueError):
    """A field's value that cannot be read: its field name and the reason."""

    def __init__(self, field_: str, message: str, where: str | None = None):
        super().__init__(message)
        self.field = field_
        self.where = where  # the row of the span it is in (spans)


def read_system(path: str | Path, fmt: str = "auto") -> SystemFile:
    """The records of a system's results file, read in `fmt` (auto: detected from the content);
    DataError naming the file, the record and the field of the first problem."""
    if fmt not in ("auto", *FORMATS):
        raise ValueError(f"unknown system format {fmt!r}; expected auto or one of "
                         f"{', '.join(FORMATS)}")
    raw = read_file(path)
    if not raw.data.strip():
        raise fatal(raw.path, "the file is empty")
    kind, table = detect(raw) if fmt == "auto" else (fmt, None)
    reader = {"ragas": _ragas, "trec": _trec, "spans": _spans}[kind]
    try:
        return reader(raw, table)
    except DataError as exc:
        if fmt == "auto":
            raise
        raise exc.read_as_given(fmt, "--system-format or systems.NAME.format",
                                "leave it out to detect it from the content") from None


# --- detection --------------------------------------------------------------------------------

def detect(raw: RawFile) -> tuple[str, str | None]:
    """(format, the tabular layout it is stored in: jsonl, json, csv, parquet, xlsx or None for
    a TREC file) from the content: Parquet and .xlsx by their magic bytes, JSON by its first
    character, spans by their span-kind column, TREC by six fields a line."""
    data = raw.data
    if data[:4] == b"PAR1":
        return ("spans" if _span_columns(_parquet_columns(raw)) else "ragas"), "parquet"
    if data[:2] == b"PK":
        return "ragas", "xlsx"
    head = data[:256 * 1024].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if head.startswith("{"):
        first = head.split("\n", 1)[0]
        try:
            keys = list(json.loads(first))
        except (json.JSONDecodeError, TypeError, RecursionError):
            keys = re.findall(r'"([^"\\]{1,200})"\s*:', first)
        return ("spans" if _span_columns(keys) else "ragas"), "jsonl"
    if head.startswith("["):
        return ("spans" if _span_columns(re.findall(r'"([^"\\]{1,200})"\s*:', head[:20000]))
                else "ragas"), "json"
    lines = [x for x in head.splitlines()[:20] if x.strip() and not x.startswith("#")]
    if lines and all(TREC_LINE.match(x) for x in lines[:-1] or lines):
        return "trec", None
    return "ragas", "csv"


def _span_columns(columns: Iterable[str]) -> bool:
    cols = set(columns)
    return bool(cols & {*KIND_COLUMNS, *TRACE_COLUMNS}) or any(
        c.startswith(DOCUMENTS) for c in cols)


def _parquet_columns(raw: RawFile) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(pa.BufferReader(raw.data)).names)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise fatal(raw.path, f"not a readable Parquet file: {exc}") from None


def _layout(raw: RawFile, given: str | None) -> str:
    """The tabular layout of a file whose format was given (no detection ran)."""
    if given:
        return given
    if raw.data[:4] == b"PAR1":
        return "parquet"
    if raw.data[:2] == b"PK":
        return "xlsx"
    head = raw.data[:4096].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    return "jsonl" if head.startswith("{") else "json" if head.startswith("[") else "csv"


def _rows(raw: RawFile, layout: str) -> tuple[list[str], list[tuple[str, Any]]]:
    """(columns, rows as (record label, values dict or a BadValue)) of a tabular file."""
    from ragdash.data.generic import read_table

    if layout == "json":
        from ragdash.data.reading import parse_json

        obj, _ = parse_json(raw)
        if not isinstance(obj, list):
            raise fatal(raw.path, "a JSON file of results must hold a list of records")
        cols: dict[str, None] = {}
        rows: list[tuple[str, Any]] = []
        for n, rec in enumerate(obj, 1):
            if isinstance(rec, dict):
                cols.update(dict.fromkeys(rec))
                rows.append((f"record {n}", rec))
            else:
                rows.append((f"record {n}", Bad("(record)", "expected a JSON object")))
        return list(cols), rows
    table = read_table(raw, layout)
    return list(table.columns), [(label, values) for label, values in table.rows]


def _row_problem(value: object) -> tuple[str, str]:
    """(field, message) of a row that could not be read (a loader's BadValue or a Bad)."""
    if isinstance(value, Bad):
        return value.field, str(value)
    args = getattr(value, "args", ())
    return (str(args[0]), str(args[1])) if len(args) == 2 else ("(record)", str(value))


def _pick(columns: Sequence[str], names: Sequence[str]) -> str | None:
    return next((n for n in names if n in columns), None)


def _fail(raw: RawFile, errors: list[tuple[str, str, str]]) -> DataError:
    """One DataError for a file's bad records: the first located, the others counted and
    named."""
    record, field_, message = errors[0]
    more = ""
    if len(errors) > 1:
        named = ", ".join(e[0] for e in errors[1:ERRORS_SHOWN])
        rest = len(errors) - ERRORS_SHOWN
        more = (f" ({len(errors) - 1:,} more record(s) with problems: {named}"
                + (f" and {rest:,} more" if rest > 0 else "") + ")")
    return DataError(Issue(str(raw.path), record, field_, message + more))


# --- values -----------------------------------------------------------------------------------

def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, str) and not value.strip())


def _text(value: object, field_: str, most: int | None = None) -> str | None:
    """A text value (numbers as written), None when missing."""
    if _missing(value):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise Bad(field_, f"expected text, got {_kind(value)}")
    text = value if isinstance(value, str) else (str(int(value)) if isinstance(value, float)
                                                 and value.is_integer() else str(value))
    if most is not None and len(text) > most:
        raise Bad(field_, f"is {len(text):,} characters long, over the limit of {most:,}")
    return text


def _kind(value: object) -> str:
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _listed(value: object, field_: str) -> list | None:
    """A list value: a list (a Parquet list, a JSON array), or in a CSV or spreadsheet cell a
    JSON list or a Python list literal (what pandas writes for a list column); None when
    missing."""
    if _missing(value):
        return None
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()  # a numpy array
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            for parse in (json.loads, ast.literal_eval):
                try:
                    got = parse(text)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
                if isinstance(got, list):
                    return got
            raise Bad(field_, "looks like a list but cannot be read as a JSON list")
        raise Bad(field_, "must be a list of texts in rank order, got one text (a single "
                          "context is a list of one: [\"...\"])")
    raise Bad(field_, f"must be a list of texts in rank order, got {_kind(value)}")


def _texts(value: object, field_: str, limit: bool = True) -> tuple[str, ...] | None:
    """A list of texts, bounded (MAX_CONTEXTS, MAX_CONTEXT_CHARS, MAX_RECORD_CHARS)."""
    items = _listed(value, field_)
    if items is None:
        return None
    if limit and len(items) > MAX_CONTEXTS:
        raise Bad(field_, f"holds {len(items):,} contexts, over the limit of {MAX_CONTEXTS:,} "
                          "per question: keep the top ones")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise Bad(f"{field_}[{i}]", f"expected text, got {_kind(item)}")
        if limit and len(item) > MAX_CONTEXT_CHARS:
            raise Bad(f"{field_}[{i}]", f"is {len(item):,} characters long, over the limit of "
                                        f"{MAX_CONTEXT_CHARS:,} for one context")
        out.append(item)
    if limit and sum(map(len, out)) > MAX_RECORD_CHARS:
        raise Bad(field_, f"holds {sum(map(len, out)):,} characters of context, over the "
                          f"limit of {MAX_RECORD_CHARS:,} per question")
    return tuple(out)


# --- RAGAS-style records ----------------------------------------------------------------------

def _ragas(raw: RawFile, layout: str | None) -> SystemFile:
    columns, rows = _rows(raw, _layout(raw, layout))
    cols = {f: _pick(columns, names) for f, names in RAGAS_FIELDS.items()}
    if cols["contexts"] is None:
        raise fatal(raw.path, "has no column of retrieved contexts: RAGAS-style records need "
                              "retrieved_contexts (or contexts), a list of texts in rank order; "
                              f"columns found: {', '.join(shown(c) for c in columns[:12])}",
                    "header", "retrieved_contexts")
    if cols["question"] is None and cols["id"] is None:
        raise fatal(raw.path, "has no question column (user_input or question) and no id "
                              "column: records cannot be matched to the dataset's questions",
                    "header", "user_input")
    records, errors = [], []
    for label, values in rows:
        if not isinstance(values, dict):
            errors.append((label, *_row_problem(values)))
            continue
        try:
            records.append(_ragas_record(label, values, cols))
        except Bad as exc:
            errors.append((label, exc.field, str(exc)))
    if errors:
        raise _fail(raw, errors)
    if not records:
        raise fatal(raw.path, "holds no record")
    return SystemFile(str(raw.path), "ragas", records)


def _ragas_record(label: str, values: dict, cols: dict[str, str | None]) -> SystemRecord:
    def get(f: str) -> object:
        c = cols[f]
        return values.get(c) if c else None

    question = _text(get("question"), cols["question"] or "user_input", MAX_CHARS["question"])
    qid = _text(get("id"), cols["id"] or "id")
    if question is None and qid is None:
        raise Bad(cols["question"] or "user_input", "the question is empty (and there is no id)")
    contexts = _texts(get("contexts"), str(cols["contexts"]))
    if contexts is None:
        raise Bad(str(cols["contexts"]), "missing: give the retrieved contexts as a list in "
                                         "rank order ([] when it retrieved nothing)")
    ids = _listed(get("context_ids"), str(cols["context_ids"])) or []
    reference = get("reference")
    if isinstance(_maybe_list(reference), list):  # RAGAS 0.1's ground_truths: a list
        golds = _texts(reference, str(cols["reference"]), limit=False) or ()
        reference = golds[0] if golds else None
    return SystemRecord(
        record=label, questions=(question,) if question else (), qid=qid, contexts=contexts,
        context_ids=tuple(None if _missing(i) else str(i) for i in ids[:len(contexts)]),
        answer=_text(get("answer"), cols["answer"] or "response", MAX_CHARS["answer"]),
        reference=_text(reference, cols["reference"] or "reference", MAX_CHARS["answer"]),
        reference_contexts=_texts(get("reference_contexts"), "reference_contexts",
                                  limit=False) or ())


def _maybe_list(value: object) -> object:
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        return value.tolist()
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            return _listed(value, "")
        except Bad:
            return value
    return value


# --- TREC run files ---------------------------------------------------------------------------

def _trec(raw: RawFile, _layout_: str | None = None) -> SystemFile:
    text = decode(raw.data).text
    by_qid: dict[str, list[tuple[int, float, int, str, str]]] = {}
    first: dict[str, str] = {}
    errors = []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        label = f"line {n}"
        parts = line.split()
        if len(parts) != 6:
            errors.append((label, "(line)", f"has {len(parts)} fields; a TREC run line has six: "
                                            "qid Q0 docid rank score tag"))
            continue
        qid, _, doc, rank, score, _tag = parts
        try:
            r = int(rank)
        except ValueError:
            errors.append((label, "rank", f"{shown(rank)} is not a whole number"))
            continue
        try:
            s = float(score)
        except ValueError:
            errors.append((label, "score", f"{shown(score)} is not a number"))
            continue
        first.setdefault(qid, label)
        by_qid.setdefault(qid, []).append((r, -s, n, doc, label))
    if errors:
        raise _fail(raw, errors)
    if not by_qid:
        raise fatal(raw.path, "holds no run line (qid Q0 docid rank score tag)")
    records, warnings = [], []
    for qid, hits in by_qid.items():
        hits.sort()  # by rank, then by score (highest first), then by line
        seen: dict[str, str] = {}
        kept = []
        for r, s, _n, doc, label in hits:
            if doc in seen:
                warnings.append(Issue(str(raw.path), label, "docid", f"document {shown(doc)} is "
                                      f"listed twice for query {shown(qid)} (first at "
                                      f"{seen[doc]}); kept once, at its best rank"))
                continue
            seen[doc] = label
            kept.append((r, s, doc, label))
        if len(kept) > MAX_CONTEXTS:
            raise fatal(raw.path, f"query {shown(qid)} lists {len(kept):,} documents, over the "
                                  f"limit of {MAX_CONTEXTS:,} per question: keep the top ones",
                        first[qid], "docid")
        records.append(SystemRecord(
            record=first[qid], qid=qid, refs=tuple(k[2] for k in kept),
            ref_records=tuple(k[3] for k in kept),
            scores=tuple(-k[1] for k in kept)))
    return SystemFile(str(raw.path), "trec", records, warnings)


# --- OpenInference spans ----------------------------------------------------------------------

def _spans(raw: RawFile, layout: str | None) -> SystemFile:
    columns, rows = _rows(raw, _layout(raw, layout))
    kind_col = _pick(columns, KIND_COLUMNS)
    if kind_col is None:
        raise fatal(raw.path, "is not an OpenInference spans file: it has no span_kind (or "
                              "attributes.openinference.span.kind) column; columns found: "
                              f"{', '.join(shown(c) for c in columns[:12])}", "header",
                    "span_kind")
    cols = {"trace": _pick(columns, TRACE_COLUMNS), "span": _pick(columns, SPAN_COLUMNS),
            "parent": _pick(columns, PARENT_COLUMNS), "start": _pick(columns, ("start_time",)),
            "kind": kind_col}
    errors = []
    spans = []
    for order, (label, values) in enumerate(rows):
        if not isinstance(values, dict):
            errors.append((label, *_row_problem(values)))
            continue
        kind = str(values.get(kind_col) or "").strip().upper()
        trace = values.get(cols["trace"]) if cols["trace"] else None
        spans.append(_Span(label, order, kind, str(label if _missing(trace) else trace),
                           values))
    if errors:
        raise _fail(raw, errors)
    kinds: dict[str, int] = {}
    for s in spans:
        kinds[s.kind or "(none)"] = kinds.get(s.kind or "(none)", 0) + 1
    if not kinds.get(RETRIEVER):
        found = ", ".join(f"{k} {n:,}" for k, n in sorted(kinds.items())) or "none"
        raise fatal(raw.path, f"holds no RETRIEVER span, so no retrieved contexts (span kinds "
                              f"found: {found}): export the traces of your RAG pipeline with "
                              "its retriever instrumented (OpenInference)", "-", kind_col)
    traces: dict[str, list[_Span]] = {}
    for s in spans:
        traces.setdefault(s.trace, []).append(s)
    records = []
    for trace, members in traces.items():
        if not any(s.kind == RETRIEVER for s in members):
            continue
        try:
            records.append(_trace_record(trace, members, cols))
        except Bad as exc:
            where = exc.where or members[0].label
            errors.append((f"trace {shown(trace, 40)} ({where})", exc.field, str(exc)))
    if errors:
        raise _fail(raw, errors)
    return SystemFile(str(raw.path), "spans", records)


@dataclass
class _Span:
    label: str
    order: int
    kind: str
    trace: str
    values: dict


def _started(span: _Span, col: str | None) -> tuple:
    """A sort key by start time (numbers and ISO texts both sort), then file order."""
    v = span.values.get(col) if col else None
    if _missing(v):
        return (1, "", span.order)
    return (0, v.isoformat() if hasattr(v, "isoformat") else
            f"{float(v):030.6f}" if isinstance(v, int | float) else str(v), span.order)


def _documents(span: _Span, column: str) -> list[dict] | None:
    """A span's documents (`retrieval.documents` or `reranker.output_documents`): the list of
    `document.*` records, or the flattened `<column>.{i}.document.*` columns; None when the
    span has neither."""
    v = span.values
    if column in v and not _missing(v[column]):
        try:
            items = _listed(v[column], column)
        except Bad as exc:
            exc.where = span.label
            raise
        if items is not None:
            out = []
            for i, item in enumerate(items):
                if isinstance(item, str):  # a Phoenix export's JSON text of one document
                    try:
                        item = json.loads(item)
                    except (json.JSONDecodeError, RecursionError):
                        item = {CONTENT: item}
                if not isinstance(item, dict):
                    raise Bad(f"{column}[{i}]", f"expected a document record ({CONTENT}, "
                                                f"{DOC_ID}, {DOC_SCORE}), got {_kind(item)}",
                              span.label)
                out.append(item)
            return out
    flat = re.compile(re.escape(column) + r"\.(\d+)\.(document\.\w+)$")
    found: dict[int, dict] = {}
    for key, value in v.items():
        m = flat.match(str(key))
        if m and not _missing(value):
            found.setdefault(int(m.group(1)), {})[m.group(2)] = value
    return [found[i] for i in sorted(found)] if found else None


def _doc_texts(span: _Span, column: str, docs: list[dict]) -> tuple[list[str], list, list]:
    texts, ids, scores = [], [], []
    for i, d in enumerate(docs):
        content = d.get(CONTENT)
        if not isinstance(content, str):
            raise Bad(f"{column}[{i}].{CONTENT}", "missing: each retrieved document needs "
                      "its text" if content is None else f"expected text, got {_kind(content)}",
                      span.label)
        texts.append(content)
        ids.append(None if _missing(d.get(DOC_ID)) else str(d.get(DOC_ID)))
        score = d.get(DOC_SCORE)
        scores.append(float(score) if isinstance(score, int | float) and not
                      isinstance(score, bool) else None)
    return texts, ids, scores


def _trace_record(trace: str, members: list[_Span], cols: dict[str, str | None]
                  ) -> SystemRecord:
    """One trace's record: its contexts (the last reranker's output documents, else every
    RETRIEVER span's documents in start order, a text a later span repeats kept once), question,
    answer."""
    members = sorted(members, key=lambda s: _started(s, cols["start"]))
    retrievers = [s for s in members if s.kind == RETRIEVER]
    texts: list[str] = []
    ids: list = []
    scores: list = []
    reranked = [(s, d) for s in members if s.kind == RERANKER
                if (d := _documents(s, RERANKED))]
    if reranked:
        span, docs = reranked[-1]
        texts, ids, scores = _doc_texts(span, RERANKED, docs)
    else:  # a later RETRIEVER span's text already retrieved is kept once (the first span whole)
        seen: set[str] = set()
        for s in retrievers:
            t, i, sc = _doc_texts(s, DOCUMENTS, _documents(s, DOCUMENTS) or [])
            for a, b, c in zip(t, i, sc, strict=True):
                if s is retrievers[0] or a not in seen:
                    texts.append(a)
                    ids.append(b)
                    scores.append(c)
            seen.update(t)
    try:
        contexts = _texts(texts, DOCUMENTS)
    except Bad as exc:
        exc.where = retrievers[0].label
        raise
    parents = {str(s.values.get(cols["span"])) for s in members} if cols["span"] else set()
    roots = [s for s in members if cols["parent"] and (
        _missing(s.values.get(cols["parent"])) or str(s.values.get(cols["parent"]))
        not in parents)]
    questions = []
    for s in [*roots[:1], *retrievers]:
        q = _unwrap(s.values.get(INPUT), QUESTION_KEYS)
        if q and q not in questions and len(q) <= MAX_CHARS["question"]:
            questions.append(q)
    if not questions:
        raise Bad(INPUT, "no question: neither the root span nor the RETRIEVER span has an "
                         "input value")
    answer = None
    for s in reversed([s for s in members if s.kind == LLM]):
        answer = _llm_answer(s)
        if answer:
            break
    if not answer:
        chains = [s for s in roots if s.kind == CHAIN] or [s for s in members if s.kind == CHAIN]
        for s in chains[:1]:
            answer = _unwrap(s.values.get(OUTPUT), ANSWER_KEYS)
    return SystemRecord(record=f"trace {shown(trace, 40)} ({retrievers[0].label})",
                        questions=tuple(questions), contexts=contexts or (),
                        context_ids=tuple(ids), scores=tuple(scores),
                        answer=answer[:MAX_CHARS["answer"]] if answer else None)


def _llm_answer(span: _Span) -> str | None:
    """An LLM span's answer: its last output message's content (`llm.output_messages`, a list
    or flattened columns), else its output value (an OpenAI reply's JSON read for its text)."""
    v = span.values
    messages = v.get(MESSAGES)
    try:
        items = _listed(messages, MESSAGES) if not _missing(messages) else None
    except Bad:
        items = None
    if not items:
        flat = re.compile(re.escape(MESSAGES) + r"\.(\d+)\." + re.escape(
            MessageAttributes.MESSAGE_CONTENT) + "$")
        found = {int(m.group(1)): val for k, val in v.items() if (m := flat.match(str(k)))
                 and isinstance(val, str)}
        items = [{MessageAttributes.MESSAGE_CONTENT: found[i]} for i in sorted(found)]
    for item in reversed(items or []):
        if isinstance(item, dict) and isinstance(
                text := item.get(MessageAttributes.MESSAGE_CONTENT), str) and text.strip():
            return text.strip()
    return _unwrap(v.get(OUTPUT), ANSWER_KEYS)


def _unwrap(value: object, keys: Sequence[str]) -> str | None:
    """The text of a span's input or output value: the value itself, or, when it is a JSON
    object, its first text under `keys` (an OpenAI reply: its first choice's message)."""
    if _missing(value) or not isinstance(value, str):
        return None
    text = value.strip()
    if not text.startswith("{"):
        return text
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    if not isinstance(obj, dict):
        return text
    choices = obj.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        msg = choices[0].get("message") or {}
        got = msg.get("content") if isinstance(msg, dict) else None
        got = got if isinstance(got, str) else choices[0].get("text")
        if isinstance(got, str) and got.strip():
            return got.strip()
    for k in keys:
        if isinstance(obj.get(k), str) and obj[k].strip():
            return obj[k].strip()
    strings = [x for x in obj.values() if isinstance(x, str) and x.strip()]
    return strings[0].strip() if len(strings) == 1 else text
