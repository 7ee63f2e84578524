"""HTML (.html, .htm) with trafilatura: the page's main text, without navigation, menus,
footers and other boilerplate; h1-h3 headings are noted. Nothing is fetched from the network."""

from __future__ import annotations

from ragdash.data.layout import TextBuilder
from ragdash.data.readers.base import Extracted, Unreadable


def _text(el) -> str:
    for lb in el.iter("lb"):  # line breaks inside a paragraph
        lb.tail = "\n" + (lb.tail or "")
    return "".join(el.itertext())


def _level(el) -> int:
    rend = (el.get("rend") or "").lower()
    return int(rend[1]) if len(rend) == 2 and rend[0] == "h" and rend[1].isdigit() else 2


def _add_block(out: TextBuilder, el) -> None:
    tag = el.tag
    if tag == "head":
        out.add(_text(el), _level(el))
    elif tag == "list":
        out.add("\n".join(f"- {' '.join(_text(item).split())}" for item in el.iter("item")))
    elif tag == "table":
        out.add("\n".join(" | ".join(" ".join(_text(cell).split()) for cell in row.iter("cell"))
                          for row in el.iter("row")))
    elif tag in ("div", "main", "quote") and len(el):
        out.add(el.text or "")
        for child in el:
            _add_block(out, child)
            out.add(child.tail or "")
    else:
        out.add(_text(el))


def read_html(data: bytes) -> Extracted:
    import trafilatura
    from lxml import etree

    xml = trafilatura.extract(data, output_format="xml", include_tables=True,
                              include_comments=False, include_links=False,
                              include_images=False, favor_recall=True)
    if not xml:
        raise Unreadable("HTML page without main text", "is an HTML page with no main text "
                         "found (empty, only navigation, or not HTML); skipped")
    out = TextBuilder()
    for main in etree.fromstring(xml.encode("utf-8")).iter("main"):
        _add_block(out, main)
    return Extracted(out.text(), headings=tuple(out.headings))
