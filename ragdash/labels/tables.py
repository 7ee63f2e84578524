"""The labels, agreement and ppi sections (`ragdash.labels.findings`) as tables and lines of
text, the same for the CLI, the HTML report and the dashboard."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ragdash.analysis.sentences import plural

ESTIMATOR_NAMES = {"labels_only": "labels only", "judge_only": "judge only",
                   "ppi_judge": "PPI judge", "ppi_retrieval": "PPI retrieval"}


ALIKE = "every value alike: no interval from this estimator"
"""The note of a cell whose interval would have no width (a bootstrap over values that are all
the same): shown as its estimate alone, never as "0.0 [0.0, 0.0]"."""


def _alike(entry: dict) -> bool:
    ci = entry.get("ci")
    return bool(ci) and entry.get("pct") is not None and ci[1] - ci[0] < 1e-9


def _cell(entry: dict) -> str:
    """"pct [lo, hi]", with * when a note comes with it (or the interval would have no
    width: `ALIKE`); — without an estimate."""
    if entry.get("pct") is None:
        return "—"
    ci = None if _alike(entry) else entry.get("ci")
    return (f"{entry['pct']:.1f}" + (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")
            + (" *" if entry.get("note") or _alike(entry) else ""))


def scope_label(scope: str) -> str:
    """A scope of the ppi section as every page says it: "all systems" for the pooled one, a
    system by its display name (never `llm_only`, `bm25`)."""
    from ragdash.constants import label

    return "all systems" if scope == "pooled" else label(scope)


def ppi_frame(ppi: dict, name: Callable[[str], str] | None = None) -> pd.DataFrame:
    """The ppi section as a table: one row per system and pooled (`name` says each scope as
    the pages do: `scope_label` by default), "pct [lo, hi]" cells."""
    name = name or scope_label
    rows = [{"system": name(scope), **{name_: _cell(entry[key])
                                 for key, name_ in ESTIMATOR_NAMES.items()},
             "labelled": entry["n_labelled"], "unlabelled": entry["n_unlabelled"]}
            for scope, entry in ppi.items()]
    return pd.DataFrame(rows).set_index("system")


def footnotes(ppi: dict, name: Callable[[str], str] | None = None) -> list[str]:
    """Each distinct reason (no estimate) and note (*) of the table once, with where it
    applies ("all systems labels only, PPI judge"; `name` says each scope: `scope_label`)."""
    name = name or scope_label
    where: dict[str, list[str]] = {}
    for scope, entry in ppi.items():
        for key, estimator in ESTIMATOR_NAMES.items():
            e = entry[key]
            text = e.get("reason") or e.get("note") or (ALIKE if _alike(e) else None)
            if text:
                where.setdefault(("— " if e.get("reason") else "* ") + text, []).append(
                    f"{name(scope)} {estimator}")
    return [f"{text} ({', '.join(cells) if len(cells) <= 3 else f'{len(cells)} cells'})"
            for text, cells in where.items()]


def labels_line(lab: dict) -> list[str]:
    """Who labelled what, the stand-in warning and what was left out, as lines."""
    if not lab["n"]:
        return ["No labels yet: `ragdash label export` writes a sample to label."]
    who = ", ".join(f"{k} ({v})" for k, v in lab["labellers"].items())
    out = [f"Labels: {lab['n']} on {plural(lab['answers'], 'answer')} by {who}"
           + (f"; {lab['cannot_tell']} 'cannot tell' left out" if lab["cannot_tell"] else "")
           + (f"; {lab['stale']} stale (answer generated again) left out"
              if lab["stale"] else "")]
    if lab["stand_in"]:
        out.append("Stand-in labels from a reference metric, not human labels: "
                   + ", ".join(lab["stand_in"]))
    if lab["outside_sample"]:
        one = lab["outside_sample"] == 1
        out.append(f"{plural(lab['outside_sample'], 'label')} outside the drawn sample "
                   f"{'is' if one else 'are'} left out of every estimate (not a random sample); "
                   "the agreement tables use " + ("it" if one else "them"))
    return out


def _stat(stat: dict | None) -> str:
    if not stat or stat.get("value") is None:
        return "—"
    ci = stat.get("ci")
    return f"{stat['value']:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def agreement_frame(agreement: dict) -> pd.DataFrame:
    """The judge ("judged 5") against the labels and each reference metric: n, accuracy and
    Cohen's kappa with their intervals, weighted kappa (labels), disagreements each way."""
    rows = []
    lab = agreement.get("labels") or {}
    if lab.get("n"):
        rows.append(("labels (correct)", lab))
    for stats in (agreement.get("reference") or {}).values():
        rows.append((stats["name"], stats))
    return pd.DataFrame([{"against": name, "n": s["n"], "accuracy": _stat(s["accuracy"]),
                          "Cohen's κ": _stat(s["kappa"]),
                          "weighted κ": _stat(s.get("weighted_kappa")),
                          "judged 5, not correct": s["disagreements"]["lenient"],
                          "correct, judged < 5": s["disagreements"]["strict"]}
                         for name, s in rows])


def confusion_frame(agreement: dict) -> pd.DataFrame | None:
    """Labels (rows) × judge scores 1–5 (columns), counts; None without labels."""
    lab = agreement.get("labels") or {}
    if not lab.get("n"):
        return None
    c = lab["confusion"]
    return pd.DataFrame(c["counts"], index=pd.Index(c["rows"], name="label"),
                        columns=[f"judge {j}" for j in c["columns"]])


def annotators_frame(agreement: dict) -> pd.DataFrame | None:
    """Pairs of labellers on the same answers: n, share of identical labels, Cohen's kappa."""
    pairs = agreement.get("annotators") or []
    if not pairs:
        return None
    return pd.DataFrame([{"labellers": " & ".join(p["labellers"]), "n": p["n"],
                          "same label": p["agreement"], "Cohen's κ": p["kappa"]}
                         for p in pairs])
