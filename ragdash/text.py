"""Small text helpers shared by loaders and chunkers."""

from __future__ import annotations

import re

# The paper's sentence splitter: break on whitespace that follows '.', '?' or '!'.
SENTENCE_BREAK = re.compile(r"(?<=[.?!])\s+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans (start, end) of the sentences of `text`, split as the paper's chunker does.

    The whitespace consumed by a break belongs to no sentence. Empty text gives no span.
    """
    spans, start = [], 0
    for m in SENTENCE_BREAK.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def split_sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]
