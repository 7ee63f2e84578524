"""One set of facts per run state: each quantity the Overview, the Thresholds page, the HTML
report and the CLI summary state about a run, computed once and typed, so a page chooses which
facts to show and never works one out again (issue 49: "The h/k rule gives no estimate" beside
"100.0 % estimated" came from two computations of one quantity).

`RunView.facts()` keeps a `RunFacts` in the view's memo, keyed on every run file it read (the
calibration, the judgments, Score_IR, the answers' costs), so a changed file gives new facts on
every page at once. The facts that cost a bootstrap and that only some pages show have kept
methods of their own, shared the same way: `RunView.label_findings()` (the share correct from
people's labels, the judge's agreement) and `RunView.signal_agreement()` (which signal agrees
with the truth). Text here is plain; `name` renders a retriever's name.

The rule and the estimates are the paper's (El Yagouby, Chevallet & Gaussier 2024, §3.3): the
share of answers with Score_IR > k estimates the share judged 5; it gives no estimate where k
separates nothing (k at an end of its range, every judged answer on one side of k, one judge
class) or where every Score_IR is alike (no estimator from Score_IR sees anything)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ragdash.analysis import area, judging, sentences, threshold_panel
from ragdash.calibration.model import HK
from ragdash.calibration.predictive import degenerate

LOGISTIC = "logistic estimator"
NO_ESTIMATE = "no estimate"


@dataclass(frozen=True)
class Share:
    """A share in percent with its 95 % interval in percent (None: none)."""

    pct: float
    ci: tuple[float, float] | None = None

    @property
    def text(self) -> str:
        return f"{self.pct:.1f} %"

    @property
    def ci_text(self) -> str:
        """'95 % CI 35.0–47.5 %', or that there is none."""
        return (f"95 % CI {self.ci[0]:.1f}–{self.ci[1]:.1f} %" if self.ci
                else "no interval (too few questions)")

    @classmethod
    def of(cls, d: dict) -> Share:
        """From calibration.json's {pct, ci}."""
        ci = d.get("ci")
        return cls(float(d["pct"]), (float(ci[0]), float(ci[1])) if ci else None)


@dataclass(frozen=True)
class Estimate:
    """An estimator's share judged 5 from Score_IR alone, or why it gives none (`reason`, with
    `short`, a few words for a tile)."""

    name: str
    share: Share | None
    reason: str | None = None
    short: str | None = None

    @property
    def value(self) -> str:
        """'52.5 %' or 'no estimate'."""
        return NO_ESTIMATE if self.share is None else self.share.text

    @property
    def sentence(self) -> str | None:
        """'The h/k rule gives no estimate here: …' (None when it gives one)."""
        if self.share is not None:
            return None
        what = "The h/k rule" if self.name == HK else f"The {self.name}"
        return f"{what} gives no estimate here: {str(self.reason).rstrip('.')}."


@dataclass(frozen=True)
class Avoided:
    """What estimating from Score_IR saves next time: money a priced model spent, else the
    time the run's local models took."""

    label: str
    value: str
    delta: str
    help: str


@dataclass(frozen=True)
class Leader:
    """The run's top card: 'Best retriever' only when told apart, else a tie."""

    title: str
    value: str
    caption: str


@dataclass(frozen=True)
class RunFacts:
    """The facts of one run state (`facts`). `budget`, `h`, `k`: the calibration's (None
    without one); `judged5`: the RAG answers' share judged 5 there; `estimates`: each
    estimator's share or why none; `evidence`: does Score_IR predict the judge there
    (`calibration.predictive.predictiveness`); `blind`: why no estimator from Score_IR sees
    anything (every Score_IR alike), else None; `basis`: the judged answers every figure of
    the section counts; `bias`: the h/k rule against the judge at the fitted k, or why it
    gives no estimate; `avoided`: only where some estimator estimates; `estimator_verdict`:
    the cross-validation in words, never a ranking on a signal that cannot be measured."""

    budget: int | None = None
    h: float | None = None
    k: float | None = None
    judged5: Share | None = None
    estimates: tuple[Estimate, ...] = ()
    evidence: dict | None = None
    blind: str | None = None
    basis: str | None = None
    bias: str | None = None
    avoided: Avoided | None = None
    estimator_verdict: str = ""
    leader: Leader | None = None
    curve_sentences: tuple[str, ...] = ()

    def estimate(self, name: str) -> Estimate | None:
        return next((e for e in self.estimates if e.name == name), None)

    @property
    def hk_reason(self) -> str | None:
        """Why the h/k rule gives no estimate at the fit (None: it gives one, or no fit)."""
        e = self.estimate(HK)
        return None if e is None else e.reason

    def cv_verdict(self, said: str, cv: pd.DataFrame | None = None) -> str:
        """A cross-validation's verdict (`calibration.model.verdict`) and table `cv` as these
        facts allow it (`_estimator_verdict`)."""
        flat = self.hk_reason if self.hk_reason != self.blind else None
        return _estimator_verdict(said, self.blind, flat, cv)

    @property
    def estimating(self) -> bool:
        """Whether any estimator gives an estimate."""
        return any(e.share is not None for e in self.estimates)


def blind_reason(evidence: dict | None) -> str | None:
    """Why no estimator from Score_IR sees anything: every judged answer has the same Score_IR
    (the verdict's words), else None."""
    side = (evidence or {}).get("correct") or {}
    return evidence["verdict"] if side.get("same_score") is not None else None


def facts(view, name: Callable[[str], str] = str) -> RunFacts:
    """The facts of the run behind `view` (a `RunView`); `name` renders retriever names in the
    sentences (the report and the pages use the display names)."""
    run = view.run
    ir = run.table("ir_scores")
    leader, curve = None, ()
    if ir is not None and len(ir):
        leader = Leader(*area.leader_card(view.headline(), name=name))
        curve = tuple(area.sentences(view.headline(), name=name))
    cal = run.calibration()
    if cal is None:
        return RunFacts(leader=leader, curve_sentences=curve)
    examples = run.table("examples")
    n_q = len(examples) if examples is not None else 0
    ev = cal.evidence
    at_cal = view.thresholds(cal.budget) if cal.budget in view.budgets else None
    if ev is None and at_cal is not None:  # a calibration written before it was stored
        ev = view.predictiveness(cal.budget)
    flat = degenerate(cal)
    blind = blind_reason(ev)
    pairs = at_cal.pairs if at_cal is not None and at_cal.has_judgments else None
    shares = cal.shares
    if shares:
        judged5 = Share.of(shares["actual"])
        raw = {label: Share.of(e) for label, e in shares["estimates"].items()}
    else:  # a calibration.json written before the shares were stored
        s = threshold_panel.correct_share_summary(cal)
        judged5 = Share(s["actual_pct"]) if s else None
        raw = {HK: Share(s["estimated_pct"])} if s else {}
    estimates = []
    for label, share in raw.items():
        if blind:
            estimates.append(Estimate(label, None, blind, "Score_IR all alike"))
        elif flat and label == HK:
            estimates.append(Estimate(label, None, flat, "degenerate fit"))
        else:
            estimates.append(Estimate(label, share))
    basis = None if pairs is None else sentences.judged_basis(
        len(pairs), pairs["qid"].nunique(), n_q)
    hk = next((e for e in estimates if e.name == HK), None)
    if hk is not None and hk.share is None:
        bias = hk.sentence
    elif flat or blind:
        bias = Estimate(HK, None, flat or blind).sentence
    elif pairs is not None:
        bias = sentences.rule_bias(threshold_panel.rule_bias(pairs, cal.k, cal.budget), n_q)
    else:
        bias = None
    done = RunFacts(budget=cal.budget, h=cal.h, k=cal.k, judged5=judged5,
                    estimates=tuple(estimates), evidence=ev or None, blind=blind, basis=basis,
                    bias=bias, estimator_verdict=_estimator_verdict(
                        cal.estimator_verdict, blind, flat, run.table("estimator_cv")),
                    leader=leader, curve_sentences=curve)
    if not (done.estimating if estimates else not flat):
        return done
    from dataclasses import replace

    return replace(done, avoided=avoided(view, n_q, len(view.retrievers)))


def _estimator_verdict(said: str, blind: str | None, flat: str | None,
                       cv: pd.DataFrame | None = None) -> str:
    """The cross-validation's verdict as the facts allow it: none where every Score_IR is
    alike (an MAE ranking of estimators that see nothing is no finding); where the fitted h/k
    rule gives no estimate, the other estimators' held-out errors (from the table `cv`) with
    no error quoted for the rule, which is refitted on each fold there."""
    if not said:
        return ""
    nothing_compared = cv is None or not len(cv)
    if blind:  # the calibration's own verdict says why where nothing was cross-validated
        return said if nothing_compared else (
            f"{blind.rstrip('.')}: no estimator from Score_IR can be compared on held-out "
            "data here.")
    if not flat:
        return said
    lines = []
    if cv is not None and len(cv):
        for scheme, g in cv[cv["method"] != HK].groupby("scheme", sort=False):
            mean = g.groupby("method", sort=False)["mae"].mean()
            lines.append(f"{scheme}: {mean.idxmin()}, mean per-retriever MAE "
                         f"{mean.min():.2f} pp")
    if not lines:  # nothing cross-validated (`nothing_compared`): the calibration says why
        return f"{said.rstrip('.')}. The h/k rule gives no estimate at the run's fit."
    return "; ".join(lines) + ". " + (
        "The h/k rule gives no estimate at the run's fit, so no error of it is compared.")


def avoided(view, n_q: int, n_retrievers: int) -> Avoided:
    """What estimating from Score_IR saves next time: the money a priced model spent on these
    calls, else (local models cost no money) the time they took."""
    from ragdash.calibration import calls_avoided
    from ragdash.llm.cost import cost_avoided

    calls = calls_avoided(n_q, n_retrievers)
    answers, judgments = view.run.table("answers"), view.run.table("judgments")
    cost = judging.costs(answers, judgments, view.llm_backends)
    spent = cost["usd"].dropna().sum() if not cost.empty else 0.0
    said = (f"Estimating from Score_IR instead of generating and judging avoids "
            f"{calls['generation_calls']:,} generations (each retriever + LLM only) and "
            f"{calls['judge_calls']:,} judge calls for {n_q:,} questions")
    delta = f"{calls['total_calls']:,} LLM calls"
    if spent >= 0.005:  # a priced model spent at least a cent
        return Avoided("LLM cost avoided next time", f"${spent:,.2f}", delta,
                       f"{said}: what this run spent on them.")
    gpt = cost_avoided(answers, judgments, calls, "gpt-4o")
    return Avoided("LLM time avoided next time",
                   judging.duration(judging.llm_seconds(answers, judgments)), delta,
                   f"{said}: the time this run's local models took on them"
                   + (f" (at GPT-4o list prices, about ${gpt:,.2f} from the recorded tokens)"
                      if gpt else "") + ".")
