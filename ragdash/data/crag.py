"""CRAG (Yang et al., NeurIPS 2024): JSONL records of a question (`query`), its answer and
alternative answers, and the web pages a search returned for it (`search_results`, each a
`page_name`, `page_url` and the raw HTML in `page_result`). CC BY-NC 4.0: not for commercial use.

The corpus is the pages, read by the HTML reader (`ragdash.data.readers`): doc_id =
'<interaction_id>#<0-based result index>', title = the page name; each example keeps its pages'
doc_ids in meta `pages`. CRAG marks no evidence in its pages, so the dataset has no relevant
parts: ingest finds them with the evidence finder (`ragdash.evidence`), and a question whose
answer it finds in none of its pages is left out and listed.
"""

from __future__ import annotations

from ragdash.data import readers
from ragdash.data.common import (
    BadValue,
    DocumentSet,
    IssueLog,
    Loaded,
    SeenIds,
    as_id,
    kind,
    non_empty,
)
from ragdash.data.generic import PARTS, PARTS_ABSENT
from ragdash.data.readers import Unreadable
from ragdash.data.reading import Text, fatal, loads
from ragdash.data.schema import Document, Example

LICENCE = "CRAG data is CC BY-NC 4.0: not for commercial use."
KEYS = ("interaction_id", "query", "answer", "search_results")
"""The fields a CRAG record has (its head tells the format apart from other JSONL)."""
MAX_PAGES = 20_000
"""The most pages (search results) one CRAG file is read with, in all: CRAG's own files have 5
per question (50 in its largest task), and each page costs an HTML parse."""


def is_crag(head: str) -> bool:
    """Whether the start of a JSONL file reads as CRAG (its first record's fields)."""
    return all(f'"{k}"' in head for k in KEYS)


def _answers(record: dict) -> tuple[str, ...]:
    """The answer and the alternative answers (a JSON list, or a list written as text)."""
    alt = record.get("alternative_answers") or []
    if isinstance(alt, str):
        try:
            alt = loads(alt)
        except ValueError:  # malformed or nested too deeply: kept as one answer
            alt = [alt]
    return tuple(str(a) for a in alt if str(a).strip()) if isinstance(alt, list) else ()


def _pages(qid: str, record: dict, label: str, log: IssueLog, docs: DocumentSet,
           read: list[int]) -> list[str]:
    """The doc_ids of a record's readable pages (an unreadable one is a warning); `read` counts
    the search results met so far in the whole file: DataError past MAX_PAGES."""
    kept = []
    results = record.get("search_results") or []
    if not isinstance(results, list):
        log.warn(label, "search_results", f"is {kind(results)}, not a list; no pages")
        results = []
    for i, page in enumerate(results):
        read[0] += 1
        if read[0] > MAX_PAGES:
            raise fatal(log.file, f"holds more than {MAX_PAGES:,} pages (search_results) in "
                                  "all, the most one CRAG file is read with: load fewer "
                                  "questions (--limit, dataset.limit) or split the file",
                        label, f"search_results[{i}]")
        if not isinstance(page, dict):
            log.warn(label, f"search_results[{i}]", "not an object; skipped")
            continue
        html = page.get("page_result") or ""
        if not isinstance(html, str):
            log.warn(label, f"search_results[{i}].page_result", f"is {kind(html)}, not text; "
                                                                 "skipped")
            continue
        if not html.strip():
            log.warn(label, f"search_results[{i}]", "the page has no HTML; skipped")
            continue
        try:
            got = readers.read_document("page.html", html.encode("utf-8", "replace"))
        except Unreadable as exc:
            log.warn(label, f"search_results[{i}]", f"{exc}")
            continue
        if not got.text.strip():
            log.warn(label, f"search_results[{i}]", "the page holds no text; skipped")
            continue
        doc_id = f"{qid}#{i}"
        docs.add(Document(doc_id, str(page.get("page_name") or doc_id), got.text, got.pages,
                          got.headings), label)
        kept.append(doc_id)
    return kept


def load(text: Text, log: IssueLog, limit: int | None = None,
         build_corpus: bool = True) -> Loaded:
    """The examples of a CRAG JSONL file (the first `limit` valid ones) and, with
    `build_corpus`, their pages as the corpus."""
    out, seen, docs, read = Loaded(), SeenIds(), DocumentSet(log, strict=False), [0]
    out.extra[PARTS] = PARTS_ABSENT
    out.extra["licence"] = LICENCE
    log.warn("-", PARTS, "CRAG marks no evidence in its pages: ragdash finds it in each "
                         "question's pages (`ragdash evidence`, or automatically at ingest)")
    for n, line in enumerate(text.text.splitlines(), start=1):
        if not line.strip():
            continue
        if limit is not None and len(out.examples) >= limit:
            break
        out.records += 1
        label = f"line {n}"
        field = "(record)"
        try:
            record = loads(line)
            if not isinstance(record, dict):
                raise BadValue("is not a JSON object")
            field = "interaction_id"
            qid = as_id(record.get("interaction_id"))
            field = "query"
            question = non_empty(record.get("query"))
            field = "answer"
            answer = non_empty(record.get("answer"))
        except BadValue as exc:
            log.error(label, field, str(exc))
            continue
        except ValueError as exc:  # a line that is not JSON
            log.error(label, field, f"is not valid JSON: {exc}")
            continue
        if seen.is_duplicate(qid, label, log, "interaction_id"):
            continue
        pages = _pages(qid, record, label, log, docs, read) if build_corpus else []
        meta = {k: record[k] for k in ("domain", "question_type", "static_or_dynamic",
                                       "query_time") if record.get(k) is not None}
        out.examples.append(Example(qid, question, answer, [], {**meta, "pages": pages},
                                    answers=(answer, *_answers(record))))
        out.labels.append(label)
    out.documents = docs.documents() if build_corpus else []
    return out
