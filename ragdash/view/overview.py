"""The Overview page's model: what the page shows, built by pure functions over a run's view
(`RunView`), so the page only lays it out and every figure and sentence is tested without a
browser. Text here is plain (the page escapes it); `name` renders a retriever's name.

    page = overview(state.view(run), name=label)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ragdash.analysis import curves, judging
from ragdash.constants import PAPER_H, PAPER_K
from ragdash.run_spec import run_spec
from ragdash.view import RunView
from ragdash.view.facts import HK, RunFacts, Share

BEST_HELP = ("Largest area under the Score_IR curve over every budget N of the run (its mean "
             "height, 95% interval over questions), so no single N decides; the lead "
             "over the runner-up is paired over questions, and \"best\" only when its interval "
             "excludes zero. The sentences under the curves say where the lead is significant.")
ESTIMATE_LABELS = {"h/k rule": "Estimated by the h/k rule",
                   "logistic estimator": "Estimated by a logistic model"}


@dataclass(frozen=True)
class Tile:
    """One metric tile: label, value, the line under the value (`delta`), its help, a
    caption under the tile (an interval), and whether the delta is good news (drawn in colour;
    grey otherwise)."""

    label: str
    value: str
    delta: str | None = None
    help: str | None = None
    caption: str | None = None
    good: bool = False


@dataclass(frozen=True)
class Prediction:
    """"Answer quality predicted from retrieval alone": the heading, what its figures rest on,
    the calibrate stage's verdict on predictiveness, the tiles (judged 5, the estimates, the
    LLM cost or time avoided) and the sentence on the rule's bias (or why it has none), as
    (lead-in shown bold, the rest)."""

    title: str
    basis: str | None
    verdict: dict | None
    tiles: list[Tile]
    note: tuple[str, str] | None


@dataclass(frozen=True)
class Overview:
    """Everything the Overview shows, in page order."""

    title: str
    facts: list[tuple[str, str]]
    """(what, value) of the run's make: created, dataset, chunker, tokenizer, Score_IR."""
    empty_retrievals: list[dict]
    """The retrieve stage's warnings of questions a retriever found nothing for."""
    systems: list[str]
    """One sentence per imported system: its file, format and questions (`imported_systems`)."""
    systems_heading: str
    """What the systems are compared with: the built-in retrievers, or nothing (a run of your
    systems alone, `retrievers.use: none`)."""
    tiles: list[Tile]
    all_failed: str | None
    prediction: Prediction | None
    no_calibration: str | None
    has_scores: bool
    order: list[str]
    curve_sentences: str = ""
    table: pd.DataFrame | None = None
    paper_data: bool = False


def ci_text(d: dict) -> str:
    """'95 % CI 35.0–47.5 %' from {pct, ci} (or a note that there is none)."""
    return Share.of(d).ci_text


def overview(view: RunView, name: Callable[[str], str] = str) -> Overview:
    """The Overview of the run behind `view`."""
    run, spec = view.run, view.spec
    examples, ir = run.table("examples"), run.table("ir_scores")
    judgments = run.table("judgments")
    order = view.retrievers
    failed = judging.all_failed(view.judgments())
    cal = run.calibration()
    no_calibration = None
    if cal is None and ir is not None and not failed:
        why = ("This run's answers are judged but not calibrated yet: `ragdash calibrate "
               "--run-dir` on it (or calibration switched on when it is built) fits h and k and "
               "puts the estimated beside the judged share of correct answers."
               if judgments is not None and len(judgments) else
               "This run has no calibration yet (no LLM answers and judgments): the estimated "
               "vs judged share of correct answers appears once the LLM stage has run.")
        no_calibration = (f"{why} The Thresholds page already estimates outcomes from "
                          f"retrieval with the paper's h = {PAPER_H} and k = {PAPER_K}.")
    has_scores = ir is not None
    return Overview(
        title=f"Run {run.id}", facts=_facts(run), order=order,
        empty_retrievals=[w for w in run.stages(["retrieve"])["retrieve"].warnings or []
                          if "examples" in w],  # not the imported systems' (`systems`)
        systems=imported_systems(run, name),
        systems_heading="compared beside the built-in retrievers" if _built_in(run) else
        "compared with each other (no built-in retriever in this run)",
        tiles=_headline_tiles(view, examples, judgments, ir, order, name),
        all_failed=failed,
        prediction=_prediction(view, cal, name) if cal is not None else None,
        no_calibration=no_calibration, has_scores=has_scores,
        curve_sentences=" ".join(view.facts(name).curve_sentences) if has_scores else "",
        table=curves.summary_table(ir, order, spec.scoring.mode) if has_scores else None,
        paper_data="hotpot" in (spec.dataset.path or "").lower())


def _built_in(run) -> list[str]:
    """The run's built-in (and live) retrievers: those compared that are not imported."""
    return [r for r in run_spec(run).compared if r not in (run.manifest.get("systems") or {})]


def imported_systems(run, name: Callable[[str], str] = str) -> list[str]:
    """One plain sentence per imported system of the run (its manifest's `systems`): the file
    and format it came from, on how many of the run's questions it is scored, and the records
    that matched none."""
    from ragdash.systems.pool import MEANING

    pool = run.manifest.get("pool")
    out = []
    if isinstance(pool, dict):
        out.append(f"The corpus is the pool of the {int(pool.get('passages', 0)):,} distinct "
                   "passages your systems retrieved"
                   + (f". {MEANING}" if run.manifest.get("evidence") else
                      ": the built-in retrievers search only those passages." if _built_in(run)
                      else "."))
    for system, m in (run.manifest.get("systems") or {}).items():
        if not isinstance(m, dict):
            continue
        n, of = int(m.get("matched", 0)), int(m.get("questions", 0))
        text = (f"{name(system)}: imported from {Path(str(m.get('file', ''))).name} "
                f"({m.get('format')}), scored on {n:,} of {of:,} questions")
        if int(m.get("answers", 0)):
            text += f", with its own answers to {int(m['answers']):,}"
        left = [f"{int(m[k]):,} {what}" for k, what in (
            ("unmatched", "match no question"), ("ambiguous", "match several"),
            ("duplicates", "repeat a question")) if int(m.get(k, 0))]
        if left:
            text += f"; of its {int(m.get('records', 0)):,} records " + ", ".join(left)
        out.append(text + ".")
    return out


def _facts(run) -> list[tuple[str, str]]:
    spec = run_spec(run)
    out = [("created", str(run.manifest.get("created", "—")))]
    if spec.dataset.path:
        out.append(("dataset", Path(spec.dataset.path).name))
    return [*out, ("chunker", spec.chunker.method), ("tokenizer", spec.tokenizer),
            ("Score_IR", f"{spec.scoring.method} ({spec.scoring.mode})")]


def _headline_tiles(view: RunView, examples, judgments, ir, order: list[str],
                    name: Callable[[str], str]) -> list[Tile]:
    run = view.run
    judged_q = (int(judgments.loc[judgments["score"].notna(), "qid"].nunique())
                if judgments is not None and "score" in judgments else 0)
    partly = examples is not None and 0 < judged_q < len(examples)
    chunks, documents = run.table("chunks"), run.table("documents")
    tiles = [
        Tile("Questions", f"{len(examples):,}" if examples is not None else "—",
             delta=f"{judged_q:,} judged by the LLM" if partly else None,
             help="Evaluation triples (question, answer, relevant parts) in this run"
                  + (f"; the LLM stages answered and judged {judged_q:,} of them." if partly
                     else ".")),
        Tile("Corpus", f"{len(documents):,} docs" if documents is not None else "—",
             delta=f"{len(chunks):,} chunks" if chunks is not None else None,
             help="Documents in the corpus; chunks below."),
        Tile("Retrievers", str(len(order)), delta=", ".join(name(r) for r in order) or None)]
    if (lead := view.facts(name).leader) is not None:
        tiles.append(Tile(lead.title, lead.value, help=BEST_HELP,
                          caption=lead.caption))  # under the tile: it wraps, uncut
    else:
        tiles.append(Tile("Best retriever", "—", help="The run has no IR scores yet."))
    return tiles


def _prediction(view: RunView, cal, name: Callable[[str], str]) -> Prediction:
    """The section's tiles and sentences, each one of the run's facts (`RunView.facts`)."""
    f = view.facts(name)
    fit_on = cal.scores or view.spec.scoring.method
    basis = None if f.basis is None else f"Every figure in this section rests on the {f.basis}."
    tiles = _share_tiles(f)
    if f.avoided is not None:  # what estimating saves, only where it estimates
        a = f.avoided
        tiles.append(Tile(a.label, a.value, delta=a.delta, help=a.help))
    note: tuple[str, str] | None = None
    if f.bias is not None:
        head, _, rest = f.bias.partition(": ")
        note = ("", f.bias) if f.hk_reason or f.blind else (head, rest)
    return Prediction(f"Answer quality predicted from retrieval alone (N = {cal.budget}, "
                      f"Score_IR by {fit_on} matching)", basis, f.evidence, tiles, note)


def _share_tiles(f: RunFacts) -> list[Tile]:
    """Judged 5 and the estimators' shares (or why they give none), from the run's facts."""
    tiles = []
    if f.judged5 is not None:
        tiles.append(Tile("Judged 5 (RAG answers)", f.judged5.text,
                          help="Share of RAG answers the judge scored 5, with its 95 % "
                               "interval over questions.",
                          caption=f.judged5.ci_text if f.judged5.ci else None))
    for e in f.estimates[:2]:
        label = ESTIMATE_LABELS.get(e.name, e.name)
        if e.share is None:
            tiles.append(Tile(label, e.value, delta=e.short, help=f"No estimate: {e.reason}"))
            continue
        err = e.share.pct - f.judged5.pct if f.judged5 is not None else None
        tiles.append(Tile(
            label, e.value, delta=None if err is None else f"{err:+.1f} pp vs judged 5",
            caption=e.share.ci_text if e.share.ci else None,
            help=(f"Share of answers with Score_IR > k = {f.k:.3f}, without any LLM call."
                  if e.name == HK else
                  "Mean out-of-fold probability of a correct answer from a logistic model of "
                  "Score_IR at every budget (5 folds over questions), without any LLM call.")))
    return tiles
