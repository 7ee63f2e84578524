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

from ragdash.analysis import area, curves, judging, sentences, thresholds
from ragdash.calibration import calls_avoided
from ragdash.calibration.predictive import degenerate
from ragdash.constants import PAPER_H, PAPER_K
from ragdash.llm.cost import cost_avoided
from ragdash.view import RunView

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
    ci = d.get("ci")
    return f"95 % CI {ci[0]:.1f}–{ci[1]:.1f} %" if ci else "no interval (too few questions)"


def overview(view: RunView, name: Callable[[str], str] = str) -> Overview:
    """The Overview of the run behind `view`."""
    run = view.run
    cfg = run.config
    examples, ir = run.table("examples"), run.table("ir_scores")
    judgments = run.table("judgments")
    order = view.retrievers
    failed = judging.all_failed(view.judgments())
    cal = run.calibration()
    no_calibration = None
    if cal is None and ir is not None and not failed:
        no_calibration = (
            "This run has no calibration yet (no LLM answers and judgments): the estimated vs "
            "judged share of correct answers appears once the LLM stage has run. The "
            "Thresholds page already estimates outcomes from retrieval with the paper's "
            f"h = {PAPER_H} and k = {PAPER_K}.")
    has_scores = ir is not None
    return Overview(
        title=f"Run {run.id}", facts=_facts(run), order=order,
        empty_retrievals=[w for w in run.stages(["retrieve"])["retrieve"].warnings or []
                          if "examples" in w],  # not the imported systems' (`systems`)
        systems=imported_systems(run, name),
        tiles=_headline_tiles(view, examples, judgments, ir, order, name),
        all_failed=failed,
        prediction=_prediction(view, cal, len(examples) if examples is not None else 0,
                               len(order)) if cal is not None else None,
        no_calibration=no_calibration, has_scores=has_scores,
        curve_sentences=" ".join(area.sentences(view.headline(), name=name))
        if has_scores else "",
        table=curves.summary_table(ir, order, cfg.scoring_mode) if has_scores else None,
        paper_data="hotpot" in str(cfg.section("dataset").get("path") or "").lower())


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
                      ": the built-in retrievers search only those passages."))
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
    cfg = run.config
    ds, chunker, scoring = (cfg.section(s) for s in ("dataset", "chunker", "scoring"))
    out = [("created", str(run.manifest.get("created", "—")))]
    if ds.get("path"):
        out.append(("dataset", Path(str(ds["path"])).name))
    if chunker:
        out.append(("chunker", str(chunker.get("method"))))
    if cfg.sections.get("tokenizer"):
        out.append(("tokenizer", cfg.tokenizer))
    if scoring:
        out.append(("Score_IR", f"{scoring.get('method')} ({cfg.scoring_mode})"))
    return out


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
    if ir is not None and len(ir):
        title, value, caption = area.leader_card(view.headline(), name=name)
        tiles.append(Tile(title, value, help=BEST_HELP, caption=caption))  # wraps, uncut
    else:
        tiles.append(Tile("Best retriever", "—", help="The run has no IR scores yet."))
    return tiles


def _prediction(view: RunView, cal, n_q: int, n_retrievers: int) -> Prediction:
    run = view.run
    ev, shares = cal.evidence, cal.shares
    if ev is None and cal.budget in run.budgets:  # written before it was stored
        ev = view.predictiveness(cal.budget)
    flat = degenerate(cal)
    fit_on = cal.scores or run.config.section("scoring").get("method") or "substring"
    at_cal = view.thresholds(cal.budget) if cal.budget in run.budgets else None
    pairs = at_cal.pairs if at_cal is not None and at_cal.has_judgments else None
    basis = None if pairs is None else "Every figure in this section rests on the " + \
        sentences.judged_basis(len(pairs), pairs["qid"].nunique(), n_q) + "."
    same = ((ev or {}).get("correct") or {}).get("same_score") is not None
    blind = ev["verdict"] if same else None  # every Score_IR alike: no estimator sees anything
    tiles = _share_tiles(cal, shares, flat, blind)
    shown = [e for e in (shares or {}).get("estimates", {})
             if not blind and not (flat and e == "h/k rule")]
    if shown if shares else not flat:  # what estimating saves, only where it estimates
        tiles.append(_avoided_tile(view, calls_avoided(n_q, n_retrievers), n_q))
    note: tuple[str, str] | None = None
    if flat:
        note = ("", f"The h/k rule gives no estimate here: {flat.rstrip('.')}.")
    elif pairs is not None:
        head, _, rest = sentences.rule_bias(thresholds.rule_bias(
            pairs, cal.k, cal.budget), n_q).partition(": ")
        note = (head, rest)
    return Prediction(f"Answer quality predicted from retrieval alone (N = {cal.budget}, "
                      f"Score_IR by {fit_on} matching)", basis, ev or None, tiles, note)


def _share_tiles(cal, shares: dict | None, flat: str | None,
                 blind: str | None = None) -> list[Tile]:
    """Judged 5 and the estimators' shares; `flat`: why the h/k rule gives no estimate;
    `blind`: why no estimator from Score_IR does (every Score_IR alike)."""
    if not shares:  # a calibration.json written before the evidence was stored
        share = thresholds.correct_share_summary(cal)
        return [Tile("Judged 5 (RAG answers)", f"{share['actual_pct']:.1f}%"),
                Tile("Estimated correct answers",
                     "no estimate" if flat else f"{share['estimated_pct']:.1f}%",
                     help=flat or f"Share of answers with Score_IR > k = {cal.k:.3f}.")]
    tiles = [Tile("Judged 5 (RAG answers)", f"{shares['actual']['pct']:.1f} %",
                  help="Share of RAG answers the judge scored 5, with its 95 % interval "
                       "over questions.", caption=ci_text(shares["actual"]))]
    for label, est in list(shares["estimates"].items())[:2]:
        if flat and label == "h/k rule":
            tiles.append(Tile(ESTIMATE_LABELS[label], "no estimate", delta="degenerate fit",
                              help=f"No estimate: {flat}"))
            continue
        if blind:
            tiles.append(Tile(ESTIMATE_LABELS.get(label, label), "no estimate",
                              delta="Score_IR all alike", help=f"No estimate: {blind}"))
            continue
        err = est["pct"] - shares["actual"]["pct"]
        tiles.append(Tile(
            ESTIMATE_LABELS.get(label, label), f"{est['pct']:.1f} %",
            delta=f"{err:+.1f} pp vs judged 5", caption=ci_text(est),
            help=(f"Share of answers with Score_IR > k = {cal.k:.3f}, without any LLM call."
                  if label == "h/k rule" else
                  "Mean out-of-fold probability of a correct answer from a logistic model of "
                  "Score_IR at every budget (5 folds over questions), without any LLM call.")))
    return tiles


def _avoided_tile(view: RunView, calls: dict, n_q: int) -> Tile:
    """What estimating from Score_IR saves next time: the money a priced model spent on these
    calls, else (local models cost no money) the time they took."""
    answers, judgments = view.run.table("answers"), view.run.table("judgments")
    cost = judging.costs(answers, judgments, view.llm_backends)
    spent = cost["usd"].dropna().sum() if not cost.empty else 0.0
    said = (f"Estimating from Score_IR instead of generating and judging avoids "
            f"{calls['generation_calls']:,} generations (each retriever + LLM only) and "
            f"{calls['judge_calls']:,} judge calls for {n_q:,} questions")
    delta = f"{calls['total_calls']:,} LLM calls"
    if spent >= 0.005:  # a priced model spent at least a cent
        return Tile("LLM cost avoided next time", f"${spent:,.2f}", delta=delta,
                    help=f"{said}: what this run spent on them.")
    gpt = cost_avoided(answers, judgments, calls, "gpt-4o")
    return Tile("LLM time avoided next time",
                judging.duration(judging.llm_seconds(answers, judgments)), delta=delta,
                help=f"{said}: the time this run's local models took on them"
                     + (f" (at GPT-4o list prices, about ${gpt:,.2f} from the recorded tokens)"
                        if gpt else "") + ".")
