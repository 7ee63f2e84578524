"""SQuAD v1.1 / v2.0 JSON.

The relevant part of a question is the sentence of its paragraph holding the first answer's span
(or the run of sentences the span touches, sliced from the paragraph as one string); every
answer's text is kept as a gold answer (`Example.answers`, the first one first). The corpus
is the paragraphs: doc_id = '<article title>#<0-based paragraph index>', title = article title;
each example keeps its paragraph's doc_id in meta `paragraph`.
"""

from __future__ import annotations

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
from ragdash.data.reading import Text, fatal, undecodable
from ragdash.data.schema import Document, Example
from ragdash.text import sentence_spans


def is_squad(obj: object) -> bool:
    if not (isinstance(obj, dict) and isinstance(obj.get("data"), list)):
        return False
    articles = obj["data"]
    return not articles or (isinstance(articles[0], dict) and "paragraphs" in articles[0])


def answer_part(context: str, spans: list[tuple[int, int]], start: int, length: int) -> str:
    """The sentences of `context` (with sentence `spans`) that the answer span touches."""
    end = start + max(length, 1)
    touched = [(s, e) for s, e in spans if s < end and e > start]
    if not touched:
        raise BadValue(f"the answer span at {start} touches no sentence of the paragraph")
    return context[touched[0][0] : touched[-1][1]]


def _locate(context: str, answer: dict, label: str, log: IssueLog) -> tuple[int, str]:
    """(answer_start, text) of an answer, checked against the paragraph. When the offset does
    not match, the occurrence of the text nearest to it is used, with a warning."""
    text = non_empty(answer.get("text"))
    start = answer.get("answer_start")
    if not isinstance(start, int) or isinstance(start, bool):
        raise BadValue(f"answer_start is {kind(start)}, expected an integer")
    if context[start : start + len(text)] == text:
        return start, text
    hits, at = [], context.find(text)
    while at >= 0:
        hits.append(at)
        at = context.find(text, at + 1)
    if not hits:
        raise BadValue(f"answer text {text!r} does not occur in the paragraph")
    best = min(hits, key=lambda h: abs(h - start))
    log.warn(label, "answers[0].answer_start",
             f"offset {start} does not match the answer text; used its occurrence at {best}")
    return best, text


def _question(qa: dict, label: str, context: str, spans: list[tuple[int, int]], meta: dict,
              log: IssueLog) -> Example:
    """One example; raises BadValue(field, message) on the first problem."""
    field = "id"
    try:
        qid = as_id(qa.get("id"))
        field = "question"
        question = non_empty(qa.get("question"))
        if meta.get("is_impossible"):
            return Example(qid, question, "", [], meta)
        field = "answers"
        answers = qa.get("answers")
        if not isinstance(answers, list) or not answers or not isinstance(answers[0], dict):
            raise BadValue("expected a non-empty list of {text, answer_start} objects")
        field = "answers[0]"
        start, text = _locate(context, answers[0], label, log)
        part = answer_part(context, spans, start, len(text))
    except BadValue as exc:
        raise BadValue(field, str(exc)) from None
    return Example(qid, question, text, [part], meta, _other_answers(answers, label, log))


def _other_answers(answers: list, label: str, log: IssueLog) -> tuple[str, ...]:
    """The texts of the answers after the first (SQuAD dev gives up to six per question); a
    bad one is left out with a warning (the question keeps its other answers)."""
    out = []
    for i, answer in enumerate(answers[1:], 1):
        if not isinstance(answer, dict):
            problem = f"expected a {{text, answer_start}} object, got {kind(answer)}"
        elif not isinstance(answer.get("text"), str):
            problem = f"text is {kind(answer.get('text'))}, expected text"
        elif not answer["text"].strip():
            problem = "text is empty"
        else:
            out.append(answer["text"])
            continue
        log.warn(label, f"answers[{i}]", f"{problem}; this gold answer is left out")
    return tuple(out)


def load(obj: object, text: Text, log: IssueLog, *, limit: int | None = None,
         build_corpus: bool = True, include_unanswerable: bool = False) -> Loaded:
    """Examples from a parsed SQuAD file, and the corpus of its paragraphs.

    Without `limit` the corpus holds every paragraph; with it, those of the examples kept.
    Unanswerable questions (v2 `is_impossible`) are left out, with one warning saying how many,
    unless `include_unanswerable` (then parts = [] and meta is_impossible=True).
    """
    if not is_squad(obj):
        raise fatal(log.file, "expected a SQuAD object {\"data\": [{\"title\", \"paragraphs\"}]}")
    out, seen, docs = Loaded(), SeenIds(), DocumentSet(log, strict=False)
    excluded = 0
    for a, article in enumerate(obj["data"], 1):
        if limit is not None and len(out.examples) >= limit:
            break
        if not (isinstance(article, dict) and isinstance(article.get("paragraphs"), list)):
            log.error(f"article {a}", "paragraphs", "expected a list of paragraphs; the "
                                                    "article's questions are skipped")
            continue
        if bad := undecodable(article, text):
            log.error(f"article {a}", bad[0], f"{bad[1]}; the article is skipped")
            continue
        title = article.get("title")
        if not isinstance(title, str) or not title.strip():
            title = f"article {a}"
            log.warn(title, "title", f"article has no title; {title!r} is used")
        for p, para in enumerate(article["paragraphs"]):
            if limit is not None and len(out.examples) >= limit:
                break
            where = f"article {a} paragraph {p + 1}"
            qas = para.get("qas") if isinstance(para, dict) else None
            context = para.get("context") if isinstance(para, dict) else None
            if not isinstance(context, str) or not isinstance(qas, list):
                log.error(where, "context", "expected {context: text, qas: [...]}; the "
                                            "paragraph's questions are skipped")
                continue
            doc = Document(f"{title}#{p}", title, context)
            spans = sentence_spans(context)
            kept = 0
            for q, qa in enumerate(qas, 1):
                if limit is not None and len(out.examples) >= limit:
                    break
                out.records += 1
                label = f"{where} question {q}"
                if not isinstance(qa, dict):
                    log.error(label, "(record)", f"expected an object, got {kind(qa)}")
                    continue
                if isinstance(qa.get("id"), str | int) and str(qa["id"]).strip():
                    label = f"id {qa['id']}"
                impossible = qa.get("is_impossible") is True
                if impossible and not include_unanswerable:
                    excluded += 1
                    continue
                meta = {"title": title, "paragraph": doc.doc_id}
                if include_unanswerable:
                    meta["is_impossible"] = impossible
                try:
                    example = _question(qa, label, context, spans, meta, log)
                except BadValue as exc:
                    log.error(label, *exc.args)
                    continue
                if seen.is_duplicate(example.qid, label, log):
                    continue
                out.examples.append(example)
                out.labels.append(label)
                kept += 1
            if build_corpus and (kept or limit is None):
                docs.add(doc, where, "context")
    if excluded:
        log.warn("all", "is_impossible", f"{excluded} unanswerable question(s) left out "
                                         "(include_unanswerable=False)")
    out.documents = docs.documents()
    out.extra["unanswerable_left_out"] = excluded
    return out
