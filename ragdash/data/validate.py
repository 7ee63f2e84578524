"""Cross-checks between a dataset and its corpus."""

from __future__ import annotations

from collections.abc import Sequence

from ragdash.data.common import IssueLog
from ragdash.data.schema import Document, Example
from ragdash.text import sentence_spans


def _separator(texts: Sequence[str]) -> str | None:
    """A character that occurs in no text, to join them without creating false matches."""
    for sep in ("\x00", "\x01", "\x02", "\x03", "\uffff", "\ufffe"):
        if not any(sep in t for t in texts):
            return sep
    return None


class CorpusIndex:
    """Answers 'does this part occur verbatim in some document?' quickly and exactly.

    1. Parts are usually sentences copied from a document: each sentence of the part is looked
       up in a map from (stripped) sentence to the first document holding it, and the part is
       checked against that document only.
    2. Otherwise the part is searched in all texts, UTF-8 encoded and joined with a separator
       that occurs in none of them (bytes search is several times faster than str search).
    3. Once more than SCAN_LIMIT parts needed step 2, a word index is built: a whitespace-
       delimited word inside the part (not its first or last, which may be cut) is a whole word
       of any document holding the part, so only the documents holding its rarest such word are
       searched. This keeps thousands of missing parts cheap.
    """

    SCAN_LIMIT = 100

    def __init__(self, documents: Sequence[Document]):
        self.texts = [d.text for d in documents]
        self.by_sentence: dict[str, int] = {}
        for i, text in enumerate(self.texts):
            for s, e in sentence_spans(text):
                self.by_sentence.setdefault(text[s:e].strip(), i)
        self.scans = 0
        self._sep = _separator(self.texts)
        self._joined: bytes | None = None
        self._words: dict[str, list[int]] | None = None

    def __contains__(self, part: str) -> bool:
        for s, e in sentence_spans(part):
            i = self.by_sentence.get(part[s:e].strip())
            if i is not None and part in self.texts[i]:
                return True
        inner = part.split()[1:-1]
        if inner and (self._words is not None or self.scans >= self.SCAN_LIMIT):
            words = self._word_index()
            rarest = min(inner, key=lambda w: len(words.get(w, ())))
            return any(part in self.texts[i] for i in words.get(rarest, ()))
        self.scans += 1
        if self._sep is None:  # every candidate separator occurs somewhere: search one by one
            return any(part in t for t in self.texts)
        if self._sep in part:
            return False
        if self._joined is None:
            self._joined = self._sep.join(self.texts).encode("utf-8", "surrogatepass")
        return part.encode("utf-8", "surrogatepass") in self._joined

    def _word_index(self) -> dict[str, list[int]]:
        if self._words is None:
            self._words = {}
            for i, text in enumerate(self.texts):
                for word in set(text.split()):
                    self._words.setdefault(word, []).append(i)
        return self._words


def check_parts_found(examples: Sequence[Example], labels: Sequence[str],
                      documents: Sequence[Document], log: IssueLog) -> None:
    """Warn (one issue per example) about relevant parts that occur in no corpus document."""
    index = CorpusIndex(documents)
    for example, label in zip(examples, labels, strict=True):
        missing = [i for i, part in enumerate(example.parts) if part not in index]
        if missing:
            first = example.parts[missing[0]]
            shown = first if len(first) <= 80 else first[:77] + "..."
            log.warn(label, "relevant_parts",
                     f"{len(missing)} of {len(example.parts)} relevant part(s) occur verbatim in "
                     f"no corpus document (parts {', '.join(str(i) for i in missing)}; "
                     f"first: {shown!r}); the record is kept")
