"""Evidence highlighting as HTML (plain Python): a retrieved context's chunks in rank order, each
relevant part's longest match painted in the part's colour (and, for semantic matching, its
closest sentence window underlined in that colour, dashed), and the end of C_N marked.

Every piece of text from documents, questions or uploads goes through `html.escape`; the only
markup is the tags written here (no attribute takes user text except escaped `title`s).
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Sequence

import pandas as pd

from ragdash.analysis.matching import Match, SemanticMatch, chunk_offsets
from ragdash.viz.colors import PART_COLORS

CSS = """
<style>
.rd-ctx{font-size:0.92rem;line-height:1.55;overflow-wrap:anywhere;white-space:pre-line;}
.rd-chunk{border:1px solid #e3e7ef;border-radius:8px;padding:8px 12px;margin:0 0 8px 0;
  background:#fff;}
.rd-chunk.rd-out{background:#f8f9fa;}
.rd-head{font-size:0.78rem;color:#5c677d;margin-bottom:4px;display:flex;gap:10px;
  flex-wrap:wrap;}
.rd-head b{color:#1f2430;}
.rd-src{color:#1f2430;font-weight:600;}
.rd-ctx mark{padding:1px 0;border-radius:2px;color:#1f2430;}
.rd-after{opacity:0.42;}
.rd-cut{display:inline-block;background:#e03131;color:#fff;font-size:0.72rem;font-weight:600;
  border-radius:4px;padding:0 6px;margin:0 3px;}
.rd-end{display:inline-block;background:#868e96;color:#fff;font-size:0.72rem;font-weight:600;
  border-radius:4px;padding:0 6px;margin:0 3px;}
.rd-parts{margin:0 0 10px 0;padding:0;list-style:none;font-size:0.88rem;overflow-wrap:anywhere;}
.rd-parts li{margin:3px 0;display:flex;gap:8px;align-items:baseline;}
.rd-sw{display:inline-block;min-width:16px;height:12px;border-radius:3px;flex:none;}
.rd-score{font-variant-numeric:tabular-nums;font-weight:600;min-width:48px;}
.rd-sem{border-bottom:3px dashed;padding-bottom:1px;}
.rd-semtag{display:inline-block;font-size:0.72rem;font-weight:600;border:1px dashed #5c677d;
  border-radius:4px;padding:0 5px;margin:0 3px;color:#1f2430;}
.rd-swd{display:inline-block;min-width:16px;height:0;border-bottom:3px dashed;flex:none;
  align-self:center;}
</style>
"""


def highlight(text: str, start: int, matches: Sequence[Match], colors: Sequence[str],
              cut: int | None = None, cut_label: str = "",
              windows: Sequence[SemanticMatch] = ()) -> str:
    """HTML of `text` (= context[start:start+len(text)]) with every match painted in its part's
    colour and every semantic window underlined (dashed) in it, with a tag giving its cosine;
    if the cut falls inside, a marker there and the text after it dimmed."""
    end = start + len(text)
    bounds = {0, len(text)}
    for m in [*matches, *windows]:
        if m.length and m.end > start and m.start < end:
            bounds.update((max(m.start, start) - start, min(m.end, end) - start))
    inside = cut is not None and start <= cut < end
    if inside:
        bounds.add(cut - start)
    marker = (f'<span class="rd-cut" title="end of C_N">✂ {html.escape(cut_label)}</span>')
    pieces = []
    for a, b in itertools.pairwise(sorted(bounds)):
        if inside and a == cut - start:
            pieces.append(marker)
        pieces += [_window_tag(w, colors) for w in windows if w.length and w.start == start + a]
        seg = _underline(html.escape(text[a:b]), start + a, start + b, windows, colors)
        covering = [m.part for m in matches
                    if m.length and m.start <= start + a and start + b <= m.end]
        after = cut is not None and start + a >= cut
        cls = ' class="rd-after"' if after else ""
        if covering:
            cs = [colors[p % len(colors)] for p in covering]
            bg = cs[0] if len(cs) == 1 else ("repeating-linear-gradient(135deg," + ",".join(
                f"{c} {i * 6}px,{c} {(i + 1) * 6}px" for i, c in enumerate(cs)) + ")")
            who = ", ".join(f"part {p + 1}" for p in covering)
            pieces.append(f'<mark{cls} style="background:{bg}" title="{who}">{seg}</mark>')
        else:
            pieces.append(f"<span{cls}>{seg}</span>" if cls else seg)
    return "".join(pieces)


def _window_tag(w: SemanticMatch, colors: Sequence[str]) -> str:
    """The tag at a semantic window's start: '≈ part 1 · cos 0.82'."""
    return (f'<span class="rd-semtag" style="border-color:{colors[w.part % len(colors)]}" '
            f'title="the sentence window closest in meaning to part {w.part + 1}">≈ part '
            f'{w.part + 1} · cos {w.cosine:.2f}</span>')


def _underline(seg: str, a: int, b: int, windows: Sequence[SemanticMatch],
               colors: Sequence[str]) -> str:
    """`seg` (escaped HTML of context[a:b]) underlined when a semantic window covers it."""
    over = [w for w in windows if w.length and w.start <= a and b <= w.end]
    if not over:
        return seg
    who = ", ".join(f"part {w.part + 1} (cos {w.cosine:.2f})" for w in over)
    return (f'<span class="rd-sem" style="border-color:{colors[over[0].part % len(colors)]}" '
            f'title="closest in meaning to {who}">{seg}</span>')


def semantic_legend(windows: Sequence[SemanticMatch], colors: Sequence[str] = PART_COLORS
                    ) -> str:
    """Per part, its semantic score and the cosine of its closest sentence window in C_N."""
    items = []
    for w in windows:
        what = (f"cosine {w.cosine:.2f} with its closest sentence window (dashed underline)"
                if w.length else "no whole sentence in C_N yet")
        items.append(f'<li><span class="rd-swd" style="border-color:'
                     f'{colors[w.part % len(colors)]}"></span><span class="rd-score">'
                     f'{w.score:.0%}</span><span>part {w.part + 1}: {what}</span></li>')
    return f'<ul class="rd-parts">{"".join(items)}</ul>'


def parts_legend(parts: Sequence[str], scores: Sequence[float] | None = None,
                 colors: Sequence[str] = PART_COLORS) -> str:
    """A list of the relevant parts, each with its colour swatch and (optionally) its score."""
    items = []
    for i, p in enumerate(parts):
        score = "" if scores is None else f'<span class="rd-score">{scores[i]:.0%}</span>'
        items.append(f'<li><span class="rd-sw" style="background:{colors[i % len(colors)]}">'
                     f'</span>{score}<span>{html.escape(p)}</span></li>')
    return f'<ul class="rd-parts">{"".join(items)}</ul>'


def _known(value: object) -> bool:
    """A value that is there: not None, NaN, NA or empty."""
    return value is not None and not (pd.api.types.is_scalar(value) and pd.isna(value)) \
        and str(value) != ""


def source_line(row: object) -> str:
    """Where a chunk comes from, as HTML spans: 'page 3 of handbook.pdf' ('pages 3–4' for a
    chunk running over a page break) and its section '§ Holidays › Public holidays' when known;
    else the document's title."""
    page, last, heading, doc = (getattr(row, k, None)
                                for k in ("page", "last_page", "heading", "doc_id"))
    spans = []
    if _known(page):
        pages = (f"pages {int(page)}–{int(last)}" if _known(last) and int(last) > int(page)
                 else f"page {int(page)}")
        spans.append(f'<span class="rd-src">{pages} of '
                     f'{html.escape(str(doc if _known(doc) else row.title))}</span>')
    else:
        spans.append(f"<span>{html.escape(str(getattr(row, 'title', '') or ''))}</span>")
    if _known(heading):
        spans.append(f'<span class="rd-src">§ {html.escape(str(heading))}</span>')
    return "".join(spans)


def context_html(chunks: pd.DataFrame, matches: Sequence[Match], cut: int, budget: int,
                 colors: Sequence[str] = PART_COLORS, whole: bool = False,
                 windows: Sequence[SemanticMatch] = ()) -> str:
    """The chunks of one retrieved context (columns rank, chunk_id, title, text, score, and
    doc_id, page, heading when known; rank order) as cards, each saying where it comes from,
    the evidence highlighted and the end of C_N (character `cut`) marked; `whole`: the context
    is shorter than N tokens, so its end is marked as such, not as a cut; `windows`: the
    semantic matches, underlined."""
    texts = chunks["text"].astype(str).tolist()
    starts = chunk_offsets(texts)
    cards = []
    for (row, text, start) in zip(chunks.itertuples(index=False), texts, starts, strict=True):
        out = start >= cut
        score = getattr(row, "score", None)
        head = (f"<b>#{int(row.rank) + 1}</b><span>{html.escape(str(row.chunk_id))}</span>"
                + source_line(row)
                + (f"<span>retrieval score {float(score):.3f}</span>"
                   if score is not None and pd.notna(score) else "")
                + ("<span>· after the cut</span>" if out else ""))
        body = highlight(text, start, matches, colors, cut, f"N = {budget}", windows)
        if cut == start + len(text) and not out:
            body += (f'<span class="rd-end" title="the context is shorter than N">end of '
                     f'context (shorter than N = {budget})</span>' if whole else
                     f'<span class="rd-cut" title="end of C_N">✂ N = {budget}</span>')
        cards.append(f'<div class="rd-chunk{" rd-out" if out else ""}">'
                     f'<div class="rd-head">{head}</div><div>{body}</div></div>')
    return f'<div class="rd-ctx">{"".join(cards)}</div>'
