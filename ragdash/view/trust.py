"""The trust section's model (the Overview and the LLM results page): what a run's human labels
say, as the sentences, tiles and notes the section lays out, built from the run's label findings
(`RunView.label_findings`) without Streamlit. `name` renders a system's name, `md` escapes text
for Markdown (the page's `widgets.md`).

    trust = summary(view.label_findings(), name=label, md=widgets.md)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ragdash.labels import headline, tables
from ragdash.view.overview import Tile

HEADING = "Share correct, checked against labels"
NO_LABELS = ("No answer is labelled yet. A few dozen labels (**Label answers**) check the judge "
             "and give the share correct with an interval that holds whatever the judge's bias.")


@dataclass(frozen=True)
class Trust:
    """The section: without labels only `labelled` False (the page says `NO_LABELS` and links
    to the labelling page); else the stand-in warning (empty for people's labels), the headline
    sentences, a tile per system (value, its interval under it, the estimator and label count
    as help), the intervals' caption, the judge's verdict line (empty without one) and the
    notes on the labels."""

    labelled: bool
    stand_in: str = ""
    headline: str = ""
    tiles: tuple[Tile, ...] = ()
    intervals: str = ""
    verdict: str = ""
    notes: tuple[str, ...] = ()


def summary(found: dict, name: Callable[[str], str] = str,
            md: Callable[[str], str] = str) -> Trust:
    """The trust section of the label findings `found` (its labels, share and agreement)."""
    lab, agreement = found["labels"], found["agreement"]
    if not lab["n"]:
        return Trust(labelled=False)
    share = found["share"]
    stand_in = ("**These are stand-in labels, not people's:** " + md(", ".join(lab["stand_in"]))
                + ". They show how the estimates work; label answers yourself for figures you "
                "can trust.") if lab["stand_in"] else ""
    tiles = []
    for system, e in share["systems"].items():
        value, caption = headline.tile(e)
        tiles.append(Tile(name(system), value, caption=caption,
                          help=(e["method"] if e.get("ci") else e.get("reason") or "")
                          + f"; {e['labels']} of its {e['answers']} answers labelled"))
    verdict = agreement.get("verdict")
    return Trust(
        labelled=True, stand_in=stand_in,
        headline=" ".join(headline.sentences(share, lab, (lab.get("sample") or {}).get("rule"))),
        tiles=tuple(tiles),
        intervals=headline.intervals_caption(share),
        verdict=f"**How good is the judge?** {md(verdict)}" if verdict else "",
        notes=tuple(md(line) for line in tables.labels_line(lab)[1:]
                    if not line.startswith("Stand-in")))  # the warning says so
