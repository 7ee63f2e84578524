"""HotpotQA in its official JSON layout (distractor or fullwiki, plain or .gz).

Relevant parts are the supporting-fact sentences, verbatim (a sentence after the first in a
paragraph starts with a space, which is kept). The corpus is the context paragraphs:
doc_id = title = the paragraph's title, text = its sentences joined with "".
"""

from __future__ import annotations

from ragdash.data.common import (
    BadValue,
    DocumentSet,
    IssueLog,
    Loaded,
    SeenIds,
    as_id,
    clean_parts,
    kind,
    non_empty,
    optional_text,
)
from ragdash.data.reading import Text, fatal, undecodable
from ragdash.data.schema import Document, Example

Context = list[tuple[str, list[str]]]


def is_hotpotqa(obj: object) -> bool:
    return (isinstance(obj, list) and bool(obj) and isinstance(obj[0], dict)
            and "supporting_facts" in obj[0])


def _context(value: object) -> Context:
    """[[title, [sentence, ...]], ...] checked; raises BadValue naming the bad paragraph."""
    if not isinstance(value, list):
        raise BadValue(f"expected a list of [title, sentences] paragraphs, got {kind(value)}")
    paragraphs = []
    for j, item in enumerate(value):
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], list) and all(isinstance(s, str) for s in item[1])):
            raise BadValue(f"paragraph {j} is not [title, [sentence, ...]]")
        paragraphs.append((item[0], item[1]))
    return paragraphs


def _parts(facts: object, context: Context) -> list[object]:
    """The sentences the supporting facts point at, in order, each fact once."""
    if not isinstance(facts, list):
        raise BadValue(f"expected a list of [title, sentence index] pairs, got {kind(facts)}")
    sentences: dict[str, list[str]] = {}
    for title, sents in context:
        sentences.setdefault(title, sents)
    parts, seen = [], set()
    for i, fact in enumerate(facts):
        if not (isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str)
                and isinstance(fact[1], int) and not isinstance(fact[1], bool)):
            raise BadValue(f"fact {i} is not [title, sentence index]: {fact!r}")
        title, idx = fact
        if title not in sentences:
            raise BadValue(f"fact {i} points at title {title!r}, which is not among the "
                           "context paragraphs")
        n = len(sentences[title])
        if not 0 <= idx < n:
            raise BadValue(f"fact {i} points at sentence {idx} of {title!r}, which has "
                           f"{n} sentence(s)")
        if (title, idx) not in seen:
            seen.add((title, idx))
            parts.append(sentences[title][idx])
    return parts


def _example(rec: dict, label: str, context: Context, log: IssueLog) -> Example:
    """Build one example; raises BadValue (with the field as first arg) on the first problem."""
    field = "_id"
    try:
        qid = as_id(rec.get("_id"))
        field = "question"
        question = non_empty(rec.get("question"))
        field = "supporting_facts"
        parts = clean_parts(_parts(rec.get("supporting_facts"), context), log, label, field)
        field = "answer"
        answer = optional_text(rec.get("answer"))
    except BadValue as exc:
        raise BadValue(field, str(exc)) from None
    if not answer.strip():
        log.warn(label, "answer", "answer is empty")
    meta = {k: rec[k] for k in ("type", "level") if k in rec}
    return Example(qid, question, answer, parts, meta)


def load(obj: object, text: Text, log: IssueLog, *, limit: int | None = None,
         build_corpus: bool = True) -> Loaded:
    """Examples from a parsed HotpotQA file, and the corpus of its context paragraphs.

    Without `limit` the corpus holds the paragraphs of every record whose context is well
    formed; with it, only those of the examples kept.
    """
    if not isinstance(obj, list):
        raise fatal(log.file, f"expected a JSON list of questions (HotpotQA), got {kind(obj)}")
    out, seen, docs = Loaded(), SeenIds(), DocumentSet(log, strict=False)
    for i, rec in enumerate(obj, 1):
        if limit is not None and len(out.examples) >= limit:
            break
        out.records += 1
        label = f"item {i}"
        if not isinstance(rec, dict):
            log.error(label, "(record)", f"expected an object, got {kind(rec)}")
            continue
        if isinstance(rec.get("_id"), str | int) and str(rec["_id"]).strip():
            label = f"item {i} (id {rec['_id']})"
        if bad := undecodable(rec, text):
            log.error(label, *bad)
            continue
        try:
            context = _context(rec.get("context"))
        except BadValue as exc:
            log.error(label, "context", str(exc))
            continue
        try:
            example = _example(rec, label, context, log)
        except BadValue as exc:
            log.error(label, *exc.args)
            example = None
        if example is not None and seen.is_duplicate(example.qid, label, log, "_id"):
            example = None
        if example is not None:
            out.examples.append(example)
            out.labels.append(label)
        if build_corpus and (example is not None or limit is None):
            for j, (title, sentences) in enumerate(context):
                docs.add(Document(title, title, "".join(sentences)), label, f"context[{j}]")
    out.documents = docs.documents()
    return out
