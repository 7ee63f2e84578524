"""The self-contained HTML report of a run: headline numbers, Table 3.1, the Score_IR figures,
chunk-level metrics, judge distributions, thresholds and estimates, issues and the manifest.

One file, no network: plotly.js is inlined once, every figure after it reuses it; every text
taken from the run (ids, questions, titles, config values) is HTML-escaped.

    from ragdash.html_report import build_report, figures
    html = build_report("runs/paper100")
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from ragdash.analysis import (
    curves,
    frames,
    judging,
    sentences,
    signals,
    threshold_panel,
    truthfulness,
)
from ragdash.constants import PAPER_H, PAPER_K, REFERENCE_METRICS
from ragdash.rundir import Memo, Run
from ragdash.view import RunView
from ragdash.view import stress as stress_model
from ragdash.view.facts import HK, NO_ESTIMATE
from ragdash.view.thresholds import without_estimate
from ragdash.viz import calibration, llm, retrieval
from ragdash.viz import stress as stress_viz
from ragdash.viz.colors import label
from ragdash.viz.style import house_template

CSS = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;color:#1f2430;margin:0;
  background:#f4f6fb;}
main{max-width:1180px;margin:0 auto;padding:24px 28px 60px;background:#fff;}
h1{margin:0 0 4px;font-size:1.9rem;} h2{margin-top:2.2rem;border-bottom:2px solid #e3e7ef;
  padding-bottom:4px;font-size:1.35rem;} .sub{color:#5c677d;margin:0 0 18px;}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0;}
.card{border:1px solid #e3e7ef;border-radius:10px;padding:10px 16px;min-width:150px;}
.card .v{font-size:1.45rem;font-weight:700;} .card .l{color:#5c677d;font-size:.85rem;}
table{border-collapse:collapse;font-size:.9rem;margin:8px 0;}
th,td{border-bottom:1px solid #e3e7ef;padding:4px 10px;text-align:right;}
th:first-child,td:first-child{text-align:left;} thead th{background:#f4f6fb;}
pre{background:#f8f9fa;padding:12px;border-radius:8px;overflow:auto;font-size:.8rem;
  max-height:420px;} .note{color:#5c677d;font-size:.88rem;}
.warn{background:#fff4e6;border-left:4px solid #f76707;padding:8px 12px;}
"""


def _table(df: pd.DataFrame, fmt: str | Callable | None = "{:.3f}", index: bool = True) -> str:
    """An escaped HTML table (pandas escapes cell text and headers)."""
    formatters = None
    if fmt is not None:
        f = fmt.format if isinstance(fmt, str) else fmt
        formatters = {c: (lambda v, f=f: "—" if pd.isna(v) else f(v))
                      for c in df.columns if pd.api.types.is_float_dtype(df[c])}
    return df.to_html(escape=True, border=0, index=index, formatters=formatters, na_rep="—")


def _card(value: str, label_: str) -> str:
    return (f'<div class="card"><div class="v">{html.escape(value)}</div>'
            f'<div class="l">{html.escape(label_)}</div></div>')


def _view(run: Run | str | Path) -> RunView:
    """A view of `run` whose answers are kept while the report is built: each fact is computed
    once, as on the dashboard (`RunView.facts`). The memo reads through `run`'s own reader, so
    a dashboard memo around the report follows every file the report read."""
    run = run if isinstance(run, Run) else Run(run)
    return RunView(run, memo=Memo(run.reader, max_entries=64))


def figures(run: Run | str | Path, view: RunView | None = None) -> dict[str, go.Figure]:
    """Every figure of the report by file-friendly name, from the run directory alone (`view`:
    the report's own, sharing its facts)."""
    view = view or _view(run)
    run = view.run
    ir = run.table("ir_scores")
    if ir is None:
        return {}
    order = view.retrievers
    budget = frames.default_budget(ir["budget"].unique())
    at = frames.at_budget(ir, budget)
    out = {"score_ir_curves": retrieval.score_curves(curves.mean_curves(ir), order),
           "score_ir_distribution": retrieval.score_distribution(at, order, budget)}
    examples = run.table("examples")
    meta = frames.metadata_columns(examples) if examples is not None else []
    if meta:
        out[f"score_ir_by_{meta[0]}"] = retrieval.breakdown_bars(
            curves.breakdown(ir, examples, meta[0], budget), order, meta[0], budget)
    metrics = run.table("ir_metrics")
    if metrics is not None:
        out["ir_metrics"] = retrieval.metrics_bars(metrics, order)
    judgments = view.judgments()
    if judgments is not None and not judging.all_failed(judgments):
        dist = judging.judge_distribution(judgments, order)
        out["judge_scores"] = llm.judge_stacked(dist, frames.order_systems(
            dist["system"], order))
        gain = judging.rag_gain(judgments, order)
        if not gain.empty:
            out["rag_vs_llm_only"] = llm.rag_gain_bars(gain)
    data = threshold_panel.judged_only(view.thresholds(_threshold_budget(run, ir)))
    h = data.fit_h if data.fit_h is not None else PAPER_H
    k = data.fit_k if data.fit_k is not None else PAPER_K
    res = threshold_panel.panel(data, h, k)
    facts = view.facts(label)
    if data.has_judgments and facts.budget == data.budget and facts.hk_reason:
        res = without_estimate(res)  # no share the rule does not estimate, as on the pages
    out["thresholds_sorted_scores"] = calibration.threshold_curves(data, res["estimated"], h, k)
    if data.has_judgments:
        from ragdash.calibration.predictive import predictiveness

        evidence = (facts.evidence if facts.budget == data.budget and facts.evidence else
                    predictiveness(data.pairs))
        out["prediction_roc"] = calibration.roc(evidence)
        out["prediction_reliability"] = calibration.reliability(evidence)
        out["thresholds_estimated_vs_actual"] = calibration.estimated_vs_actual(res["compare"])
        out["thresholds_confusion"] = calibration.confusion(res["confusion"])
        out["thresholds_by_judge"] = calibration.ir_by_judge(data, h, k)
        out["thresholds_objective"] = calibration.objective(data, h, k)
    if (stressed := stress_model.stress(view)) is not None:
        s = stressed.summary
        out["stress_noise"] = stress_viz.noise_curve(s.by_ratio)
        if len(s.by_position):
            out["stress_position"] = stress_viz.position_bars(s.by_position,
                                                              stressed.position_ratio)
        out["stress_dose_response"] = stress_viz.dose_response(s.curve, stressed.observed,
                                                               stressed.h, stressed.k)
    return out


def _threshold_budget(run: Run, ir: pd.DataFrame) -> int:
    """The budget of the report's threshold section: the calibration's, else the default."""
    cal = run.calibration()
    if cal is not None and cal.budget in set(ir["budget"]):
        return cal.budget
    return frames.default_budget(ir["budget"].unique())


def _threshold_sentences(view: RunView, ir: pd.DataFrame, n_questions: int | None
                         ) -> dict[str, list[str]]:
    """What the threshold figures show, in words from their numbers (plain text): `basis`
    (how many judged answers they count), `bias` (the h/k rule against the judge, or why it
    gives no estimate: the run's fact, `RunView.facts`) and `confusion` (how to read the
    matrix, the verdict first); empty without judged answers."""
    data = threshold_panel.judged_only(view.thresholds(_threshold_budget(view.run, ir)))
    if not data.has_judgments:
        return {}
    h = data.fit_h if data.fit_h is not None else PAPER_H
    k = data.fit_k if data.fit_k is not None else PAPER_K
    p = data.pairs
    facts = view.facts(label)
    bias = (facts.bias if facts.budget == data.budget and facts.bias else
            sentences.rule_bias(threshold_panel.rule_bias(p, k, data.budget), n_questions))
    return {"basis": [sentences.judged_basis(len(p), p["qid"].nunique(), n_questions)],
            "bias": [bias],
            "confusion": sentences.confusion_reading(threshold_panel.panel(data, h, k)["confusion"],
                                                     h, k, data.budget)}


def figure_html(fig: go.Figure, title: str = "ragdash figure") -> str:
    """One figure as a standalone HTML page (plotly.js inlined: works offline)."""
    body = fig.to_html(full_html=False, include_plotlyjs="inline",
                       config={"displaylogo": False})
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title></head><body>{body}</body></html>")


def _labels_html(view: RunView) -> list[str]:
    """The judge's agreement with labels and gold answers, and the share correct with
    prediction-powered intervals (a run with answers and labels or a calibration)."""
    from ragdash.labels import headline, tables

    run = view.run
    if not run.has("answers") or not (run.has("labels") or run.has("calibration")):
        return []
    sections = view.label_findings()
    if sections is None:
        return []
    agreement, ppi = sections["agreement"], sections["ppi"]
    out = ["<h2>Is the judge right? Agreement with labels and gold answers</h2>",
           f"<p><b>{html.escape(agreement['verdict'])}</b></p>"]
    out += [f'<p class="{"warn" if "Stand-in" in line else "note"}">{html.escape(line)}</p>'
            for line in tables.labels_line(sections["labels"])]
    table = tables.agreement_frame(agreement)
    if not table.empty:
        out.append('<p class="note">"Judged 5" against each truth, with 95 % bootstrap '
                   "intervals over questions; the weighted κ puts the judge's 1–5 on the "
                   "labels' scale (5 correct, 2–3 partly, 1 and 4 wrong).</p>")
        out.append(_table(table, fmt=None, index=False))
    for frame in (tables.confusion_frame(agreement), tables.annotators_frame(agreement)):
        if frame is not None:
            out.append(_table(frame, fmt="{:.2f}", index=frame.index.name is not None))
    share, lab = sections["share"], sections["labels"]
    out.append("<h2>Share correct, checked against labels</h2>")
    out += [f"<p>{html.escape(line.replace('**', ''))}</p>" for line in
            headline.sentences(share, lab, (lab.get("sample") or {}).get("rule"))]
    out.append(_table(pd.DataFrame(
        [{"system": label(s), "share correct": headline.tile(e)[0], "interval · labels":
          headline.tile(e)[1]} for s, e in share["systems"].items()]), fmt=None, index=False))
    out.append('<p class="note">' + html.escape(headline.intervals_caption(share)) + "</p>")
    out.append("<h3>Other estimators</h3>")
    out.append('<p class="note">Share of answers correct (label "correct", judge 5) in % with '
               "95 % intervals, the answers treated as drawn from an endless supply: from the "
               "sample's labels alone; from the judge alone (valid only if the judge is right); "
               "prediction-powered (PPI) with the judge's scores or with a retrieval model "
               "fitted on the judge's scores, the labels correcting the predictions' bias.</p>")
    out.append(_table(tables.ppi_frame(ppi), fmt=None))
    notes = tables.footnotes(ppi)
    out += [f'<p class="note">{html.escape(n)}</p>' for n in notes if n]
    return out


def _truthfulness_html(view: RunView) -> list[str]:
    """CRAG's truthfulness score per system (`analysis.truthfulness`), with its sentence."""
    found = view.truthfulness()
    if found is None or found[0].empty:
        return []
    table, _, sources = found
    return ["<h2>Truthfulness: a wrong answer counts against a system (CRAG score)</h2>",
            '<p class="note">' + html.escape(
                "Each answer correct (+1), missing (0: declined, by the refusal rule) or "
                "incorrect (−1), as CRAG scores them (Yang et al., NeurIPS 2024); per system "
                "the mean with a 95 % interval over questions. Correct by: "
                f"{sources}.") + "</p>",
            f"<p>{html.escape(truthfulness.sentence(table, name=label))}</p>",
            _table(truthfulness.display(table, name=label), fmt=None, index=False)]


def _signals_html(view: RunView) -> list[str]:
    """"Which signal agrees with the truth here?": the one-line verdict and the table (AUC with
    its interval, Spearman, the LLM calls and tokens each signal cost)."""
    found = view.signal_agreement()
    if found is None or found[0].empty:
        return []
    table, truth = found
    out = ["<h2>Which signal agrees with the truth here?</h2>",
           '<p class="note">' + html.escape(
               f"Truth: {truth}. Per signal: the AUC for \"correct\" with its 95 % interval "
               "over questions (never narrower than their number allows), Spearman's rho with "
               "the truth, and the LLM calls and tokens it cost (– not recorded); best "
               "first.") + "</p>"]
    if truth.startswith("reference metric"):
        out.append('<p class="note">The truth is itself computed from the gold answers: the '
                   "other reference metrics agree with it partly by construction.</p>")
    best = signals.best_line(table)
    if best:
        out.append(f"<p><b>{html.escape(best)}</b></p>")
    out.append(_table(signals.display_table(table), fmt=None, index=False))
    return out


def _stress_html(view: RunView, fig: Callable[[str], str]) -> list[str]:
    """The controlled contexts (`ragdash.view.stress`): what they are, their sentences and
    figures."""
    stressed = stress_model.stress(view)
    if stressed is None:
        return []
    return ["<h2>Does the evidence cause good answers? (controlled contexts)</h2>",
            '<p class="note">' + html.escape(
                f"The generator answered {stressed.contexts:,} contexts built from the run's own "
                f"chunks for {stressed.questions:,} questions: chunks holding a relevant part, "
                "with chunks the retrievers ranked high that hold none as noise (RGB's tests, "
                "Chen et al. AAAI 2024). Correct: the answer contains a gold answer; 95 % "
                "Wilson intervals over questions.") + "</p>",
            "<ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in stressed.sentences)
            + "</ul>", fig("stress_noise"), fig("stress_position"),
            fig("stress_dose_response")]


def _no_paths(value):
    """The manifest with every absolute file path cut to its file name: a report is shared
    beyond the server whose folders it would otherwise show."""
    if isinstance(value, dict):
        return {k: _no_paths(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_paths(v) for v in value]
    if isinstance(value, str) and (value.startswith(("/", "~")) or value[1:3] == ":\\"):
        return Path(value).name
    return value


def build_report(run: Run | str | Path, view: RunView | None = None) -> str:
    """The whole report as one self-contained HTML string (`view`: a view of `run` whose kept
    facts it states, e.g. the dashboard's; by default one of its own)."""
    view = view or _view(run)
    run = view.run
    man, spec = run.manifest, view.spec
    examples, ir = run.table("examples"), run.table("ir_scores")
    documents, chunks = run.table("documents"), run.table("chunks")
    judgments = view.judgments()
    with house_template():
        figs = figures(run, view)
    plotly_done = False
    parts: list[str] = []

    def fig(name: str) -> str:
        nonlocal plotly_done
        if name not in figs:
            return ""
        out = figs[name].to_html(full_html=False, include_plotlyjs=(
            False if plotly_done else "inline"), config={"displaylogo": False})
        plotly_done = True
        return out

    order = view.retrievers
    parts.append(f"<h1>ragdash report · run {html.escape(str(run.id))}</h1>")
    parts.append('<p class="sub">' + html.escape(
        f"created {man.get('created', '—')} · dataset {Path(spec.dataset.path or '—').name} · "
        f"chunker {spec.chunker.method or '—'} · tokenizer "
        f"{spec.tokenizer} · Score_IR {spec.scoring.method} "
        f"({spec.scoring.mode}) · report written "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}") + "</p>")
    cards = [_card(f"{len(examples):,}" if examples is not None else "—", "questions"),
             _card(f"{len(documents):,}" if documents is not None else "—", "documents"),
             _card(f"{len(chunks):,}" if chunks is not None else "—", "chunks"),
             _card(", ".join(label(r) for r in order) or "—", "retrievers")]
    facts = view.facts(label)  # every number and verdict below is one of the run's facts
    if (lead := facts.leader) is not None:
        cards.append(_card(lead.value, f"{lead.title.lower()} (area under the Score_IR curve): "
                                       f"{lead.caption}"))
    if run.has("answers") and (run.has("labels") or run.has("calibration")):
        from ragdash.labels import headline

        found = view.label_findings() or {}
        share = found.get("share")
        if share and share["pooled"].get("ci"):
            e = share["pooled"]
            who = found.get("labels") or {}
            stand_in = bool(who.get("stand_in")) and set(who.get("labellers") or {}) <= set(
                who["stand_in"])  # as the Overview, never passed off as people's labels
            cards.append(_card(f"{e['estimate'] * 100:.0f} % correct",
                               f"{headline.subject(share, e['answers'])}, "
                               + ("every one labelled, so exact: "
                                  if headline.exact(e) else
                                  f"labelled: {headline.interval_words(e, share['level'])} "
                                  "from ")
                               + f"{e['labels']} "
                               + ("stand-in labels (a reference metric, not people's)"
                                  if stand_in else "labels")))
    cal = run.calibration()
    hk = facts.estimate(HK)
    said = _threshold_sentences(view, ir, len(examples) if examples is not None else None
                                ) if ir is not None and len(ir) else {}
    if cal is not None and facts.judged5 is not None:
        est = NO_ESTIMATE if hk is None or hk.share is None else f"{hk.share.pct:.1f}%"
        cards.append(_card(f"{est} vs {facts.judged5.pct:.1f}%",
                           "estimated (h/k rule) vs judged 5 (RAG answers)"
                           + "".join(f", on {b}" for b in said.get("basis", []))))
        cards.append(_card(f"h = {cal.h:.3f} · k = {cal.k:.3f}",
                           f"thresholds fitted at N = {cal.budget}"))
    parts.append(f'<div class="cards">{"".join(cards)}</div>')

    if ir is not None:
        parts.append("<h2>Retrieval: Score_IR over token budgets</h2>")
        parts.append('<p class="note">Score_IR(Q, N): mean over the relevant parts of the longest '
                     "common substring with the first N tokens of the retrieved context, divided "
                     "by the part's length.</p>")
        parts.append(fig("score_ir_curves"))
        parts.append("<p>" + html.escape(" ".join(facts.curve_sentences)) + "</p>")
        t = curves.summary_table(ir, order, spec.scoring.mode)
        parts.append("<h3>Mean Score_IR per budget (Table 3.1)</h3>")
        parts.append(_table(t.rename(columns=label)))
        parts.append(fig("score_ir_distribution"))
        parts.extend(fig(n) for n in figs if n.startswith("score_ir_by_"))
        metrics = run.table("ir_metrics")
        if metrics is not None:
            parts.append("<h3>Chunk-level IR metrics</h3>")
            parts.append(fig("ir_metrics"))
            parts.append(_table(metrics.assign(retriever=metrics["retriever"].map(label)),
                                index=False))
    failed = judging.all_failed(judgments)
    if failed:
        errs = judging.errors_table(run.table("answers"), judgments)
        parts.append("<h2>LLM answers and judge scores</h2>")
        parts.append(f'<p class="warn">{html.escape(failed)} See the errors below.</p>')
        parts.append(f'<p class="note">The first {min(len(errs), 50):,} of {len(errs):,} '
                     "failed generation or judge calls:</p>")
        parts.append(_table(errs.head(50), fmt=None, index=False))
    elif judgments is not None:
        parts.append("<h2>LLM answers and judge scores</h2>")
        parts.append(fig("judge_scores"))
        t33 = judging.table_3_3(judgments, order)
        parts.append("<h3>Judge-score shares per system (Table 3.3)</h3>")
        parts.append(_table(t33.rename(index=label), fmt="{:.1%}"))
        parts.append(fig("rag_vs_llm_only"))
        errs = judging.errors_table(run.table("answers"), judgments)
        parts.append(f'<p class="note">{len(errs):,} failed generation or judge calls are '
                     "counted apart and never averaged in.</p>")
        checks = view.audit()
        parts.append("<h3>Can the judge be trusted?</h3>")
        parts.append(_table(pd.DataFrame({
            "check": [c.title for c in checks], "status": [c.status for c in checks],
            "finding": [c.finding for c in checks], "passes when": [c.limit for c in checks]}),
            index=False))
    ref = view.reference_summary()
    if ref is not None and not ref.empty:
        parts.append("<h2>Answers against the gold answers (no LLM)</h2>")
        parts.append('<p class="note">SQuAD exact match and token F1, the share of answers '
                     "containing a gold answer, ROUGE-L and the MiniLM cosine with the gold "
                     "answer (each the best over a question's gold answers), in %; failed or "
                     "empty answers score 0.</p>")
        pct = {m: REFERENCE_METRICS[m].label for m in ref.columns if m in REFERENCE_METRICS}
        parts.append(_table(ref.assign(system=ref["system"].map(label), **{
            c: 100 * ref[c] for c in pct}).set_index("system").rename(columns=pct)
            .rename_axis(None),
            fmt="{:.1f}"))
    parts.extend(_truthfulness_html(view))
    parts.extend(_signals_html(view))
    parts.extend(_stress_html(view, fig))
    parts.extend(_labels_html(view))
    if "prediction_roc" in figs:
        parts.append("<h2>Does retrieval predict answer quality here?</h2>")
        ev = facts.evidence
        if ev:
            parts.append(f"<p><b>{html.escape(ev['verdict'])}</b> "
                         f"{html.escape(ev.get('refusal_verdict', ''))}</p>")
        if facts.judged5 is not None and facts.estimates:
            rows = [("judged 5", facts.judged5, None),
                    *((e.name, e.share, e.reason) for e in facts.estimates)]
            parts.append(_table(pd.DataFrame({
                "share judged 5": [n for n, _, _ in rows],
                "%": [NO_ESTIMATE if v is None else f"{v.pct:.1f}" for _, v, _ in rows],
                "95 % CI": [why if v is None else "—" if not v.ci else
                            f"{v.ci[0]:.1f}–{v.ci[1]:.1f}" for _, v, why in rows]}),
                fmt=None, index=False))
        parts += [f'<p class="note">On the {html.escape(b)}.</p>' for b in said.get("basis", [])]
        parts += [f"<p>{html.escape(b)}</p>" for b in said.pop("bias", [])]
        parts.append(fig("prediction_roc"))
        parts.append(fig("prediction_reliability"))
    if "thresholds_sorted_scores" in figs:
        parts.append("<h2>Thresholds: outcomes estimated from retrieval alone</h2>")
        parts.append(fig("thresholds_sorted_scores"))
        parts += [f'<p class="note">Every figure of this section counts the same answers: '
                  f"the {html.escape(b)}.</p>" for b in said.get("basis", [])]
        parts.append(fig("thresholds_estimated_vs_actual"))
        parts += [f"<p>{html.escape(b)}</p>" for b in said.get("bias", [])]
        parts.append(fig("thresholds_confusion"))
        if said.get("confusion"):
            first, *rest = said["confusion"]
            parts.append(f"<h3>Reading the confusion matrix</h3><p><b>{html.escape(first)}</b>"
                         "</p><ul>" + "".join(f"<li>{html.escape(t)}</li>" for t in rest)
                         + "</ul>")
        for n in ("thresholds_by_judge", "thresholds_objective"):
            parts.append(fig(n))
        if cal is not None and not cal.per_retriever.empty:
            t = cal.per_retriever
            cols = ["retriever", "n", "est_5", "act_5", "est_2_4", "act_2_4", "est_1", "act_1",
                    "mae"]
            flat = facts.hk_reason  # no h/k estimate of the share correct, as on the Overview
            if flat:
                t = t.assign(est_5=float("nan"), mae=float("nan"))  # no error of no estimate
            parts.append("<h3>Estimated vs judged shares (%, calibration.json)</h3>")
            parts.append(_table(t[[c for c in cols if c in t]].assign(
                retriever=lambda d: d["retriever"].map(label)), fmt="{:.1f}", index=False))
            if flat:
                parts.append('<p class="note">' + html.escape(
                    f"est_5 and mae: no estimate, {flat.rstrip('.')}.") + "</p>")
    iss = run.table("issues")
    if iss is not None:
        parts.append("<h2>Input issues</h2>")
        parts.append(f'<p class="note">{sentences.plural(len(iss), "issue")}'
                     f'{"; the first 50" if len(iss) > 50 else ""}:</p>')
        parts.append(_table(iss.head(50), fmt=None, index=False))
    parts.append("<h2>Run manifest</h2>")
    parts.append(f"<pre>{html.escape(json.dumps(_no_paths(man), indent=2, default=str))}</pre>")
    body = "\n".join(p for p in parts if p)
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>ragdash · "
            f"{html.escape(str(run.id))}</title><style>{CSS}</style></head><body><main>{body}"
            "</main></body></html>")


def write_report(run: Run | str | Path, path: str | Path) -> Path:
    """Write the report of `run` to `path`."""
    path = Path(path)
    path.write_text(build_report(run), encoding="utf-8")
    return path
