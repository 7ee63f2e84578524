"""Which signal agrees with the truth here? Per signal (Score_IR@N, the 1-5 judge, the reference
metrics, each RAGAS and RAGChecker metric), against one truth per answer (human labels where the
run has them, else a reference metric, named as such): the AUC for "correct" with an interval
over questions (`auc_interval`: answers of one question are resampled together, and the interval
is never narrower than the questions allow), Spearman's rho with the truth, and a one-line
verdict; best first.

AUC is the Mann-Whitney probability that a correct answer's signal exceeds a wrong one's (ties
count one half); Spearman is the Pearson correlation of the ranks (average ranks for ties)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

from ragdash.calibration.survey import beta_interval

COLUMNS = ["signal", "n", "auc", "auc_low", "auc_high", "spearman", "calls", "tokens",
           "verdict"]
ERAG_LABELS = {"erag_precision": "precision@k", "erag_map": "MAP", "erag_mrr": "MRR",
               "erag_ndcg": "nDCG@k", "erag_hit": "hit@k"}
"""eRAG's measures (`ragdash.erag.measures.MEASURES`) as people name them."""
JUDGE_QUALITY = {5: 1.0, 3: 0.5, 2: 0.25, 1: 0.0, 4: 0.0}
"""The paper's 1-5 judge scale as a quality order (4 "fully incorrect" ranks with 1)."""


def signal_label(name: str, *, detail: bool = False) -> str:
    """How a signal column is named for people: 'Score_IR', 'LLM judge', 'token F1', 'RAGAS
    faithfulness', 'human labels'; with `detail` (axes, pickers, the signal table) what it
    measures follows in brackets: 'Score_IR (retrieval, no LLM)'. A lower-is-better metric
    says so: 'RAGChecker hallucination (lower is better)'."""
    from ragdash.constants import REFERENCE_METRICS
    from ragdash.metrics import METRICS

    if name in REFERENCE_METRICS:
        short, more = REFERENCE_METRICS[name].label, "vs gold answer"
    elif name in METRICS:
        framework = {"ragas": "RAGAS", "ragchecker": "RAGChecker"}.get(
            METRICS[name].framework, METRICS[name].framework)
        short, more = f"{framework} {name}", ""
    elif name in ERAG_LABELS:
        short, more = f"eRAG {ERAG_LABELS[name]}", "the generator on each chunk alone"
    else:
        short, more = {"score_ir": ("Score_IR", "retrieval, no LLM"),
                       "judge": ("LLM judge", "1 = fully correct, 0 = wrong"),
                       "truth": ("human labels", ""),
                       "truthfulness": ("CRAG truthfulness",
                                        "correct +1, declined 0, wrong −1")}.get(name, (name, ""))
    more = more if detail else ""
    if direction(name) < 0:
        more = ", ".join(filter(None, [more, "lower is better"]))
    return f"{short} ({more})" if more else short


def direction(name: str) -> int:
    """1 where a higher value means a better answer, -1 where lower does (RAGChecker's
    hallucination and noise sensitivities: shares of wrong claims). The agreement with the truth
    and the order of the systems read a signal times its direction."""
    from ragdash.metrics import METRICS

    return -1 if name in METRICS and METRICS[name].lower_better else 1


def signal_range(name: str) -> tuple[float, float]:
    """The values a signal takes per answer: CRAG truthfulness −1 to 1, every other 0 to 1."""
    return (-1.0, 1.0) if name == "truthfulness" else (0.0, 1.0)


def auc(signal: np.ndarray, correct: np.ndarray) -> float:
    """Mann-Whitney AUC of `signal` for the boolean `correct`; NaN without both classes."""
    pos, neg = int(correct.sum()), int((~correct).sum())
    if not pos or not neg:
        return float("nan")
    ranks = rankdata(signal)
    return float((ranks[correct].sum() - pos * (pos + 1) / 2) / (pos * neg))


def bootstrap_aucs(signal: np.ndarray, correct: np.ndarray, groups: np.ndarray, n_boot: int,
                   rng: np.random.Generator) -> np.ndarray:
    """The AUC of `n_boot` resamples of the questions (`groups`) with replacement (resamples
    with one class only left out). A resample is a weight per answer (how often its question
    was drawn), so each AUC is a weighted Mann-Whitney count over the signal's tied values,
    for a block of resamples at once: the same values as ranking each resample anew."""
    labels, index = np.unique(groups, return_inverse=True)
    n_groups = len(labels)
    tie = np.unique(signal, return_inverse=True)[1]  # the signal's tied values, numbered
    order = np.argsort(tie, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(tie[order]) != 0])
    pos = correct[order].astype(float)
    out = []
    block = max(1, 4_000_000 // max(len(signal), n_groups))
    for first in range(0, n_boot, block):
        rows = min(block, n_boot - first)
        draws = rng.integers(0, n_groups, (rows, n_groups))
        counts = np.bincount((draws + n_groups * np.arange(rows)[:, None]).ravel(),
                             minlength=rows * n_groups).reshape(rows, n_groups)
        w = counts[:, index[order]].astype(float)
        p = np.add.reduceat(w * pos, starts, axis=1)  # correct answers' weight per value
        n = np.add.reduceat(w * (1 - pos), starts, axis=1)
        below = np.cumsum(n, axis=1) - n  # wrong answers' weight at lower values
        pairs = p.sum(axis=1) * n.sum(axis=1)
        won = (p * (below + 0.5 * n)).sum(axis=1)
        out.append(won[pairs > 0] / pairs[pairs > 0])
    return np.concatenate(out) if out else np.empty(0)


def effective_classes(correct: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    """The correct and wrong answers' counts divided by Kish's design effect 1 + (k̄ − 1)·ρ:
    k̄ answers per question, ρ the intra-question correlation of being correct (one-way
    ANOVA, clipped to [0, 1]). Five answers of one question that are all right or all wrong
    count as one; answers of questions that are right and wrong at random count in full."""
    y = pd.Series(correct.astype(float))
    by = y.groupby(np.asarray(groups))
    sizes, means = by.size(), by.mean()
    n, q = len(y), len(sizes)
    k = (n - (sizes**2).sum() / n) / (q - 1) if q > 1 else 1.0
    between = (sizes * (means - y.mean()) ** 2).sum() / max(q - 1, 1)
    within = ((y - by.transform("mean")) ** 2).sum() / max(n - q, 1)
    rho = (between - within) / (between + (k - 1) * within) if between + within > 0 else 0.0
    deff = 1 + (sizes.mean() - 1) * float(np.clip(rho, 0.0, 1.0))
    return float(correct.sum()) / deff, float((~correct).sum()) / deff


def _hanley_mcneil(a: float, pos: float, neg: float) -> float:
    """The AUC's variance for `pos` and `neg` independent answers (Hanley & McNeil, 1982),
    averaged over which class the exponential approximation takes as the first."""
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    one = (a * (1 - a) + (pos - 1) * (q1 - a * a) + (neg - 1) * (q2 - a * a)) / (pos * neg)
    two = (a * (1 - a) + (neg - 1) * (q1 - a * a) + (pos - 1) * (q2 - a * a)) / (pos * neg)
    return (one + two) / 2


def auc_interval(auc_value: float, replicates: np.ndarray, classes: tuple[float, float],
                 level: float) -> tuple[float, float]:
    """Clopper–Pearson at the effective sample size Ã(1 − Ã) / v (Korn & Graubard, 1998): v is
    the variance of the bootstrap `replicates`, never below Hanley and McNeil's at Ã for the
    effective class counts `classes` (`effective_classes`); Ã = (AUC·m + 1) / (m + 2), m the
    smaller count. Where every resample separates the classes perfectly the percentile
    interval was 1.00–1.00 (it held a true AUC of 0.99 in 10 % of draws at 10 questions,
    `benchmarks/auc_interval_coverage.py`); this one has the width the counts allow."""
    pos, neg = classes
    if not len(replicates) or min(pos, neg) <= 0:
        return float("nan"), float("nan")
    m = min(pos, neg)
    shrunk = (auc_value * m + 1) / (m + 2)
    floor = _hanley_mcneil(shrunk, max(pos, 1.0), max(neg, 1.0))
    var = max(float(np.var(replicates, ddof=1)) if len(replicates) > 1 else 0.0, floor)
    return beta_interval(auc_value, shrunk * (1 - shrunk) / var, level)


MIN_QUESTIONS = 10
"""Questions a signal's AUC interval needs. Set when the interval was a percentile bootstrap
(it covered the true AUC in 89 % of 150 draws at 5 questions, 94 % at 10); `auc_interval`
covers at 97 % or more from 10 questions on in `benchmarks/auc_interval_coverage.py`, which
does not simulate fewer."""


def verdict(auc_value: float, low: float, high: float, questions: int | None = None) -> str:
    """One line on a signal's AUC and its interval (none under MIN_QUESTIONS questions)."""
    if np.isnan(auc_value):
        return "cannot tell: the truth has one class only"
    if questions is not None and questions < MIN_QUESTIONS:
        return (f"too few questions for an interval ({questions}; from {MIN_QUESTIONS} on): "
                "no verdict")
    if low <= 0.5 <= high:
        return "no better than chance here (its interval holds 0.5)"
    if auc_value < 0.5:
        return "ranks wrong answers higher: reversed"
    if auc_value >= 0.8:
        return "agrees well with the truth"
    return "agrees somewhat with the truth"


def signal_agreement(frame: pd.DataFrame, signals: Sequence[str], truth: str, *,
                     correct_at: float = 0.5, group: str = "qid", n_boot: int = 1000,
                     level: float = 0.95, seed: int = 0,
                     cost: Mapping[str, tuple[int, int]] | None = None) -> pd.DataFrame:
    """One row per signal (COLUMNS), sorted by AUC, best first (signals without an AUC last).

    `frame`: one row per answer with the `signals` columns, the `truth` column (a number or a
    boolean; "correct" when it is at least `correct_at`) and `group` (the question, the unit
    of the bootstrap). Each signal uses the answers where it and the truth are present, read
    in its `direction` (a lower-is-better metric's AUC is that of its negative).
    `cost`: (LLM calls, tokens) it took, by signal (`signal_costs`); NaN where not given."""
    rng = np.random.default_rng(seed)
    rows = []
    for name in signals:
        if name not in frame.columns:
            raise ValueError(f"no signal column {name!r}")
        sub = frame[[name, truth, group]].dropna()
        x = sub[name].astype(float).to_numpy() * direction(name)
        t = sub[truth].astype(float).to_numpy()
        correct = t >= correct_at
        same = len(x) > 0 and bool(np.all(x == x[0]))  # nothing to rank: no AUC, not 0.5
        a = float("nan") if same else auc(x, correct)
        questions = sub[group].nunique()
        groups = sub[group].astype(str).to_numpy()
        low, high = (auc_interval(a, bootstrap_aucs(x, correct, groups, n_boot, rng),
                                  effective_classes(correct, groups), level)
                     if not np.isnan(a) and questions >= MIN_QUESTIONS else (np.nan, np.nan))
        rho = (float(spearmanr(x, t).statistic) if len(x) > 2 and np.ptp(x) > 0
               and np.ptp(t) > 0 else float("nan"))
        calls, tokens = (cost or {}).get(name, (np.nan, np.nan))
        rows.append({"signal": name, "n": len(sub), "auc": a, "auc_low": low, "auc_high": high,
                     "spearman": rho, "calls": calls, "tokens": tokens,
                     "verdict": (f"not measurable: every answer has the same value "
                                 f"({x[0] * direction(name):.2f}), so it cannot separate "
                                 "correct from wrong answers" if same and correct.any()
                                 and not correct.all() else verdict(a, low, high, questions))})
    out = pd.DataFrame(rows, columns=COLUMNS)
    floats = ["auc", "auc_low", "auc_high", "spearman", "calls", "tokens"]
    out[floats] = out[floats].astype(float)
    # signals with an interval first (a perfect AUC on three questions is no best signal)
    return out.assign(_shown=out["auc_low"].notna()).sort_values(
        ["_shown", "auc"], ascending=False, na_position="last", kind="stable") \
        .drop(columns="_shown").reset_index(drop=True)


def best_line(table: pd.DataFrame, strong: Callable[[str], str] = str) -> str | None:
    """The one-line verdict of a `signal_agreement` table: its best signal (`signal_label`
    with detail, through `strong`, e.g. Markdown bold), AUC, interval and verdict; None when no
    signal has an AUC with an interval."""
    if table.empty or pd.isna(table.iloc[0]["auc"]) or pd.isna(table.iloc[0]["auc_low"]):
        return None
    top = table.iloc[0]
    name = strong(signal_label(str(top["signal"]), detail=True))
    return (f"Best here: {name}, AUC {top['auc']:.2f} (95 % CI "
            f"{top['auc_low']:.2f}–{top['auc_high']:.2f}): {top['verdict']}.")


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """A `signal_agreement` table as text for people: signals named by `signal_label` with
    detail, AUC with its
    interval in one column, numbers rounded, counts with thousands separators, "–" where
    there is no value."""
    def num(v: float, f: str) -> str:
        return "–" if pd.isna(v) else format(v, f)

    return pd.DataFrame({
        "signal": table["signal"].map(lambda s: signal_label(s, detail=True)),
        "answers": table["n"].map(lambda v: f"{v:,}"),
        "AUC (95 % CI)": [(f"{num(a, '.3f')} ({num(lo, '.2f')}–{num(hi, '.2f')})"
                           if pd.notna(lo) else f"{num(a, '.3f')} (no interval)")
                          if pd.notna(a) else "–" for a, lo, hi in
                          zip(table["auc"], table["auc_low"], table["auc_high"], strict=True)],
        "Spearman": table["spearman"].map(lambda v: num(v, ".3f")),
        "LLM calls": table["calls"].map(lambda v: num(v, ",.0f")),
        "tokens": table["tokens"].map(lambda v: num(v, ",.0f")),
        "verdict": table["verdict"]})


def cost_text(calls: float, tokens: float) -> str:
    """What a signal cost in words: 'no LLM call', '48 calls, 12,600 tokens', or '–' where the
    run did not record it."""
    if pd.isna(calls):
        return "–"
    if calls == 0:
        return "no LLM call"
    spent = f"{calls:,.0f} call{'s' if calls != 1 else ''}"
    return spent if pd.isna(tokens) else f"{spent}, {tokens:,.0f} tokens"


LABEL_QUALITY = {5: 1.0, 3: 0.0, 1: 0.0}
"""Human labels as the truth's values: labelled correct (5) is 1; partly correct (3) and wrong
(1) are 0, as in the share correct (`ragdash.labels.findings`)."""


def answer_signals(reference: pd.DataFrame, *, ir: pd.DataFrame | None = None,
                   judgments: pd.DataFrame | None = None, metrics: pd.DataFrame | None = None,
                   erag: pd.DataFrame | None = None, labels: pd.DataFrame | None = None,
                   truth_metric: str = "contains"
                   ) -> tuple[pd.DataFrame, str, list[str], float]:
    """One row per answer (qid, system) with every signal, and the truth column `truth`.

    `reference`: reference.parquet (one row per answer); `ir`: Score_IR at one budget (qid,
    retriever, score) as `score_ir`; `judgments`: the 1-5 judge as `judge` (JUDGE_QUALITY);
    `metrics`: metrics.parquet's metric columns; `erag`: eRAG's measures per (qid, system)
    (`ragdash.erag.summary.erag_summary`'s per_answer: retrievers only); `labels`: human labels
    (a labeller named "stand-in..." is not human). The truth is the share of an answer's human
    labels that say "correct" (correct when at least half do) where the run has human labels,
    else the reference metric `truth_metric` (then not also a signal; the reference metrics are
    those of `constants.REFERENCE_METRICS` the table has). Returns the frame, the truth's name, the
    signal columns and the truth's "correct" cut-off."""
    from ragdash.constants import REFERENCE_METRICS

    key = ["qid", "system"]
    df = reference.assign(qid=reference["qid"].astype(str)).drop_duplicates(key)
    signals = [m for m in REFERENCE_METRICS if m in df.columns]
    df = df[[*key, *signals]].astype(dict.fromkeys(signals, float))
    if ir is not None and len(ir):
        at = ir.rename(columns={"retriever": "system", "score": "score_ir"})
        df = df.merge(at.assign(qid=at["qid"].astype(str))[[*key, "score_ir"]], on=key,
                      how="left")
        signals.insert(0, "score_ir")
    if judgments is not None and len(judgments):
        j = judgments.assign(qid=judgments["qid"].astype(str)).drop_duplicates(key)
        j = j.assign(judge=j["score"].map(lambda s: JUDGE_QUALITY.get(int(s)) if pd.notna(s)
                                          else np.nan))
        df = df.merge(j[[*key, "judge"]], on=key, how="left")
        signals.insert(1 if "score_ir" in signals else 0, "judge")
    if metrics is not None and len(metrics):
        from ragdash.metrics import METRICS

        names = [m for m in METRICS if m in metrics.columns]
        m = metrics.assign(qid=metrics["qid"].astype(str)).drop_duplicates(key)
        df = df.merge(m[[*key, *names]], on=key, how="left")
        signals += names
    if erag is not None and len(erag):
        names = [m for m in ERAG_LABELS if m in erag.columns]
        e = erag.assign(qid=erag["qid"].astype(str)).drop_duplicates(key)
        df = df.merge(e[[*key, *names]], on=key, how="left")
        signals += names
    human = None
    if labels is not None and len(labels):
        human = labels[~labels["labeller"].astype(str).str.startswith("stand-in")]
        human = human[human["score"].notna()]
    if human is not None and len(human):
        h = human.assign(qid=human["qid"].astype(str),
                         truth=human["score"].map(lambda s: LABEL_QUALITY.get(int(s))))
        df = df.merge(h.groupby(key, as_index=False)["truth"].mean(), on=key, how="left")
        return df, "human labels", signals, 0.5
    if truth_metric not in signals:
        raise ValueError(f"truth_metric must be one of {', '.join(signals)}")
    signals.remove(truth_metric)
    return (df.assign(truth=df[truth_metric]), f"reference metric: {truth_metric}", signals,
            REFERENCE_METRICS[truth_metric].correct_at)


def _judge_cost(judgments: pd.DataFrame) -> tuple[float, float]:
    """Distinct judge calls (`call_id`: a grouped call scores several answers) and their tokens
    in and out; NaN without call ids or token counts."""
    if not {"call_id", "tokens_in", "tokens_out"} <= set(judgments.columns):
        return np.nan, np.nan
    calls = judgments.dropna(subset=["call_id"]).drop_duplicates("call_id")
    tokens = calls["tokens_in"].fillna(0).astype(float) + calls["tokens_out"].fillna(0) \
        .astype(float)
    return float(len(calls)), float(tokens.sum())


def _step_costs(metrics: pd.DataFrame) -> dict[str, list[float]] | None:
    """Calls and tokens (in + out) per LLM step, summed over the answers from each row's
    `detail` JSON (`cost`: step -> [calls, tokens in, tokens out]); None when a measured row
    lacks the record (a table written before it was kept)."""
    import json

    total: dict[str, list[float]] = {}
    if "detail" not in metrics.columns:
        return None
    for detail in metrics["detail"]:
        if detail is None or (isinstance(detail, float) and np.isnan(detail)):
            continue  # no answer to measure: no call
        cost = json.loads(detail).get("cost")
        if cost is None:
            return None
        for step, (calls, t_in, t_out) in cost.items():
            spent = total.setdefault(step, [0.0, 0.0])
            spent[0] += calls
            spent[1] += t_in + t_out
    return total


def signal_costs(signals: Sequence[str], *, judgments: pd.DataFrame | None = None,
                 metrics: pd.DataFrame | None = None,
                 erag: tuple[float, float] | None = None) -> dict[str, tuple[float, float]]:
    """(LLM calls, tokens in + out) each signal cost, for `signal_agreement`'s `cost`.

    Score_IR and the reference metrics need no LLM (0, 0). The judge: its distinct calls and
    their tokens. A RAGAS or RAGChecker metric: the calls of the LLM steps it reads, summed over
    the answers (a step several metrics read, such as the answer's claims, counts for each:
    what that metric alone would cost). An eRAG measure: every chunk's call (`erag`, from
    `ragdash.erag.summary.erag_cost`), which each measure reads. NaN where the run did not
    record it."""
    from ragdash.metrics import METRICS

    steps = _step_costs(metrics) if metrics is not None and len(metrics) else None
    out: dict[str, tuple[float, float]] = {}
    for name in signals:
        if name == "judge":
            out[name] = _judge_cost(judgments) if judgments is not None else (np.nan, np.nan)
        elif name in METRICS:
            if steps is None:
                out[name] = (np.nan, np.nan)
            else:
                used = [steps.get(s, [0.0, 0.0]) for s in METRICS[name].steps]
                out[name] = (sum(u[0] for u in used), sum(u[1] for u in used))
        elif name in ERAG_LABELS:
            out[name] = erag if erag is not None else (np.nan, np.nan)
        elif name == "truthfulness":  # an outcome from labels, the judge or a reference metric
            out[name] = (np.nan, np.nan)
        else:
            out[name] = (0.0, 0.0)
    return out
