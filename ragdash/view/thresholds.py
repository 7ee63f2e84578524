"""The Thresholds page's model: what its panel shows for a budget N and sliders (h, k), built by
pure functions over a run's view (`RunView`), so the page only lays it out and every figure and
sentence is tested without a browser. Text here is plain Markdown (the page escapes nothing
user-derived: retriever names pass through `name`).

    page = panel(state.view(run), n, h, k, name=label)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import judging, sentences, threshold_panel
from ragdash.analysis.system_means import order_text
from ragdash.analysis.threshold_panel import ThresholdData
from ragdash.constants import PAPER_H, PAPER_K
from ragdash.view import RunView
from ragdash.view.overview import Tile

COMPARE_COLUMNS = {
    "n": "answers", "est_5": "est. correct", "act_5": "judged 5", "err_5": "error",
    "est_2_4": "est. risk", "act_2_4": "judged 2–4", "err_2_4": "error ",
    "est_1": "est. lacks info", "act_1": "judged 1", "err_1": "error  ", "mae": "MAE (pp)"}
"""The estimated-vs-judged table's columns as the page heads them (the errors' headers differ
by spaces only: a table's headers must be unique)."""


@dataclass(frozen=True)
class Start:
    """Where the panel starts: the budget N (the calibration's, else the default) and the
    sliders' h and k (the fit at N, else the paper's values)."""

    n: int
    h: float
    k: float


@dataclass(frozen=True)
class Panel:
    """Everything the Thresholds panel shows at (N, h, k), in page order.

    `data`: the thresholds at N cut to the judged answers (`threshold_panel.judged_only`);
    `result`: `threshold_panel.panel`'s numbers; `reference`: the dashed lines (h, k, "fit" or
    "paper"); `tiles`: the two agreements, the share in the estimated class and the share
    error (empty without judgments); `table`: estimated vs judged shares per retriever."""

    data: ThresholdData
    result: dict
    basis: str | None
    fit: str
    diagnosis: list[str]
    tiles: list[Tile]
    reference: tuple[float, float, str]
    bias: tuple[str, str] | None
    table: pd.DataFrame | None
    order: str | None
    confusion: list[str]
    no_estimate: str | None = None
    """Why the h/k rule gives no estimate at (N, k) (its share correct withheld), or None."""


def start(view: RunView) -> Start:
    """The budget the panel opens at and the fitted (else the paper's) h and k there."""
    from ragdash.analysis import frames

    budgets = view.budgets
    cal = view.run.calibration()
    n = cal.budget if cal is not None and cal.budget in budgets else \
        frames.default_budget(budgets)
    first = view.thresholds(n)
    return Start(n, round(first.fit_h if first.fit_h is not None else PAPER_H, 3),
                 round(first.fit_k if first.fit_k is not None else PAPER_K, 3))


def no_judgments(view: RunView) -> str:
    """Why the judge-based figures are missing: no judgments, or none that could be scored."""
    failed = judging.all_failed(view.judgments())
    return "No judgment in this run could be scored" if failed else \
        "The run has no judgments"


def agreement_tiles(data: ThresholdData, result: dict) -> list[Tile]:
    """Agreement of k with [judge = 5] and of h with [judge = 1], each against always
    predicting the more common side; the share in the estimated class; the share error."""
    judge = data.pairs["judge"].to_numpy()
    tiles = []
    for name, cls in (("k", 5), ("h", 1)):
        share = float((judge == cls).mean())
        majority = max(share, 1 - share)
        agree = result[f"agreement_{name}"]
        tiles.append(Tile(
            f"Agreement of {name}", f"{agree:.1%}",
            delta=f"{(agree - majority) * 100:+.1f} pp vs majority",
            help=f"Share of answers where [Score_IR {'>' if name == 'k' else '<'} {name}] "
                 f"equals [judge = {cls}], against {majority:.1%} for always predicting the "
                 "more common side", good=agree > majority))
    tiles.append(Tile("In the estimated class", f"{result['accuracy']:.1%}",
                      help="Share of answers whose judge class is the one Score_IR predicts"))
    none = pd.isna(result["mae"])
    tiles.append(Tile("Share error (MAE)", "no estimate" if none else f"{result['mae']:.1f} pp",
                      help="No estimate of the share correct at this k, so no error of it"
                      if none else "Mean absolute error of estimated vs judged class shares, "
                      "in percentage points, averaged over retrievers"))
    return tiles


def compare_table(result: dict, name: Callable[[str], str] = str) -> pd.DataFrame:
    """Estimated vs judged class shares per retriever, headed as the page shows them."""
    cmp = result["compare"]
    show = cmp.assign(retriever=cmp["retriever"].map(name)).set_index("retriever")
    # a column the rule does not estimate at this k is left out, not shown empty
    keep = [c for c in COMPARE_COLUMNS if not show[c].isna().all()]
    return show[keep].rename(columns=COMPARE_COLUMNS)


def judge_order(pairs: pd.DataFrame, act: pd.Series, name: Callable[[str], str] = str) -> str:
    """The retrievers by share judged 5 (`act`, indexed by retriever), best first: neighbours
    joined by ">" only where the paired difference over questions is significant (Wilcoxon,
    Holm-adjusted over the neighbours, p ≤ 0.05), by "≈" where it is not, by "=" where the
    shares are equal: a few answers' difference is never an order."""
    from ragdash.analysis import compare
    from ragdash.analysis.system_means import SAME

    v = act.dropna().sort_values(ascending=False, kind="stable")
    if len(v) < 2:
        return order_text(v, name)
    five = pairs.assign(five=(pairs["judge"] == 5).astype(float)).pivot_table(
        index="qid", columns="retriever", values="five", aggfunc="mean")
    steps = list(zip(v.index[:-1], v.index[1:], strict=True))
    tests = compare.pairwise_columns(five, steps)
    out = name(v.index[0])
    for (a, b), p in zip(steps, tests["p_holm"], strict=True):
        told = p is not None and not pd.isna(p) and p <= 0.05
        out += (" = " if abs(v[a] - v[b]) <= SAME else " > " if told else " ≈ ") + name(b)
    return out


def order_sentence(result: dict, name: Callable[[str], str] = str,
                   pairs: pd.DataFrame | None = None) -> str:
    """The retrievers ranked by estimated correct answers and by the judge, and whether the
    order is the same (equal shares tie, "="; a tie is never an order). With the judged
    `pairs`, the judge's order says which steps a test tells apart (`judge_order`)."""
    by = result["compare"].set_index("retriever")
    act_rank = (order_text(by["act_5"], name) if pairs is None else
                judge_order(pairs, by["act_5"], name))
    if by["est_5"].isna().all():  # the rule gives no estimate here: it orders nothing
        return (f"Errors in percentage points, estimated − judged. No order by estimated "
                f"correct answers: the h/k rule gives no estimate at this k. By the judge: "
                f"{act_rank}.")
    est_rank = order_text(by["est_5"], name)
    if "≈" in act_rank:
        verdict = ("≈: no significant difference in judged 5, paired over questions; the judge "
                   "does not order these, so there is no order for the rule to preserve")
    else:
        same = "the same" if est_rank == act_rank else "a different"
        verdict = f"{same} order — the paper's claim is that the ranking is preserved"
    return (f"Errors in percentage points, estimated − judged. Ranked by estimated correct "
            f"answers: {est_rank}; by the judge: {act_rank} ({verdict}).")


def fit_sentence(data: ThresholdData, n: int, h: float, k: float, failed: bool) -> str:
    """What h and k were fitted to at N and where the sliders are now (or why they start at
    the paper's values)."""
    if data.fit_h is None or data.fit_k is None:
        return (f"{'No judgment could be scored' if failed else 'No judgments in this run'}: "
                f"h and k start at the paper's values (h = {PAPER_H}, k = {PAPER_K}); the "
                "estimates below need no LLM.")
    overlap = " **h > k: the bands overlap; above k counts as correct first.**" if h > k else ""
    return (f"Fitted at N = {n} on {len(data.pairs):,} judged answers: **h = {data.fit_h:.3f}**"
            f", **k = {data.fit_k:.3f}** (exact sweep; {data.n_excluded} judge errors "
            f"excluded). Sliders now: h = {h:.3f}, k = {k:.3f}.{overlap}")


def no_estimate(view: RunView, data: ThresholdData, n: int, k: float,
                name: Callable[[str], str] = str) -> str | None:
    """Why the h/k rule gives no estimate at (N, k) on the judged answers, or None: at the
    run's fitted N and k, the run's fact (`RunView.facts`: the Overview's, the report's and the
    CLI's words); elsewhere the same test at the sliders' k (`no_estimate_at`)."""
    from ragdash.calibration.predictive import no_estimate_at

    cal = view.run.calibration()
    if cal is not None and cal.budget == n and round(float(cal.k), 3) == round(k, 3) and \
            cal.fits_on(view.spec.scoring.method):
        return view.facts(name).hk_reason
    return no_estimate_at(data.pairs["ir"], data.pairs["judge"], k)


def without_estimate(result: dict) -> dict:
    """`threshold_panel.panel`'s numbers with the rule's share correct withheld (its estimate and
    error per retriever NaN, no MAE over them): where the rule gives no estimate, no table or
    chart shows one."""
    out = dict(result)
    est = result["estimated"].copy()
    est["est_5"] = float("nan")
    out["estimated"] = est
    if "compare" in result:
        cmp = result["compare"].copy()
        cmp[["est_5", "err_5", "mae"]] = float("nan")
        out["compare"] = cmp
        out["mae"] = float("nan")
    return out


def panel(view: RunView, n: int, h: float, k: float,
          name: Callable[[str], str] = str) -> Panel:
    """The Thresholds panel at budget N with the sliders at (h, k)."""
    data = threshold_panel.judged_only(view.thresholds(n))
    result = threshold_panel.panel(data, h, k)
    failed = bool(judging.all_failed(view.judgments()))
    reference = ((round(data.fit_h, 3), round(data.fit_k, 3), "fit")
                 if data.fit_h is not None and data.fit_k is not None
                 else (PAPER_H, PAPER_K, "paper"))
    judged = data.has_judgments
    n_questions = int(view.ir_scores()["qid"].nunique())
    bias = None
    flat = no_estimate(view, data, n, k, name) if judged else None
    if flat:  # no table, chart or tile shows a share the rule does not estimate
        result = without_estimate(result)
    if judged:
        if flat:  # the Overview's words at the fitted k: no number for a rule without one
            bias = ("", f"The h/k rule gives no estimate here: {flat.rstrip('.')}.")
        else:
            head, _, rest = sentences.rule_bias(threshold_panel.rule_bias(data.pairs, k, n),
                                                n_questions).partition(": ")
            bias = (head, rest)
    return Panel(
        data=data, result=result, no_estimate=flat,
        basis=("Every figure below counts the same answers: the " + sentences.judged_basis(
            len(data.pairs), data.pairs["qid"].nunique(), n_questions) + ".") if judged
        else None,
        fit=fit_sentence(data, n, h, k, failed),
        diagnosis=threshold_panel.fit_diagnosis(data),
        tiles=agreement_tiles(data, result) if judged else [],
        reference=reference, bias=bias,
        table=compare_table(result, name) if judged else None,
        order=order_sentence(result, name, data.pairs) if judged else None,
        confusion=sentences.confusion_reading(result["confusion"], h, k, n) if judged else [])
