"""Computations behind the dashboard and the report (no streamlit): per-question tables, bootstrap
bands, breakdowns, paired comparisons, evidence positions, judge distributions, LLM usage and the
threshold panel's numbers.

Every function takes the run's tables (pandas frames as stored in the run directory, DESIGN §3)
and returns frames or plain values, so the same numbers come out of the dashboard, the HTML
report and a notebook. Shares are fractions in [0, 1] unless a name says `pct`.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ragdash.calibrate import CLASSES, fit_threshold, judge_class, objective_curve, rule_class

LLM_ONLY = "llm_only"
PAPER_ORDER = ("bm25", "sim", "mmr", "reo", "mlq")
SCORES = (1, 2, 3, 4, 5)
SCORE_LABELS = {1: "1 · not enough information", 2: "2 · partly correct, some errors",
                3: "3 · partly correct, incomplete", 4: "4 · incorrect", 5: "5 · correct"}
CLASS_LABELS = {"1": "lacks information", "2-4": "risk of hallucination", "5": "correct"}


# --- ordering and budgets ---------------------------------------------------------------------


def order_systems(names: Iterable[str], preferred: Sequence[str] = ()) -> list[str]:
    """Distinct names: LLM-only first, then `preferred` order, then the paper's, then the rest."""
    names = list(dict.fromkeys(str(n) for n in names))
    rank = {n: i for i, n in enumerate([LLM_ONLY, *preferred, *PAPER_ORDER])}
    return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))


def default_budget(budgets: Iterable[int], target: int = 1000) -> int:
    """`target` when present (the paper's N), else the largest budget."""
    budgets = sorted(int(b) for b in budgets)
    if not budgets:
        raise ValueError("no budget: the run has no IR scores")
    return target if target in budgets else budgets[-1]


def at_budget(ir: pd.DataFrame, budget: int) -> pd.DataFrame:
    """(qid, retriever, score) at one budget; qid as str."""
    out = ir.loc[ir["budget"] == budget, ["qid", "retriever", "score"]]
    return out.assign(qid=out["qid"].astype(str)).reset_index(drop=True)


def score_matrix(ir: pd.DataFrame, budget: int) -> pd.DataFrame:
    """Questions × retrievers Score_IR at one budget."""
    return at_budget(ir, budget).pivot(index="qid", columns="retriever", values="score")


# --- Score_IR curves, distributions, breakdowns -------------------------------------------------


def bootstrap_curves(ir: pd.DataFrame, n_boot: int = 1000, level: float = 0.95,
                     seed: int = 0) -> pd.DataFrame:
    """Mean Score_IR per (retriever, budget) with a percentile bootstrap band over questions.

    Columns: retriever, budget, mean, lo, hi, n. One resample of questions is shared by all
    budgets of a retriever, so each band is a band of curves.
    """
    rng = np.random.default_rng(seed)
    rows = []
    alpha = (1 - level) / 2
    for ret, g in ir.groupby("retriever", sort=False):
        m = g.pivot_table(index="qid", columns="budget", values="score", aggfunc="first")
        m = m.sort_index(axis=1).ffill(axis=1).fillna(0.0)
        values = m.to_numpy()
        n = len(values)
        counts = rng.multinomial(n, np.full(n, 1 / n), size=n_boot)
        boots = counts @ values / n
        lo, hi = np.quantile(boots, [alpha, 1 - alpha], axis=0)
        for j, b in enumerate(m.columns):
            rows.append((ret, int(b), float(values[:, j].mean()), float(lo[j]), float(hi[j]), n))
    return pd.DataFrame(rows, columns=["retriever", "budget", "mean", "lo", "hi", "n"])


def summary_table(ir: pd.DataFrame, order: Sequence[str] = (), mode: str = "corrected"
                  ) -> pd.DataFrame:
    """The paper's Table 3.1 (mean Score_IR, budget × retriever), retrievers in display order."""
    from ragdash.pipeline import summary_table as table

    t = table(ir, mode)
    return t[[c for c in order_systems(t.columns, order) if c in t.columns]]


def breakdown(ir: pd.DataFrame, examples: pd.DataFrame, by: str, budget: int) -> pd.DataFrame:
    """Mean Score_IR at `budget` per (group of `by`, retriever): columns group, retriever, mean,
    sem, n."""
    at = at_budget(ir, budget)
    meta = examples[["qid", by]].assign(qid=examples["qid"].astype(str))
    df = at.merge(meta, on="qid", how="left")
    df[by] = df[by].astype(str).where(df[by].notna(), "(none)")
    g = df.groupby([by, "retriever"], sort=True)["score"]
    out = g.agg(["mean", "sem", "count"]).reset_index()
    return out.rename(columns={by: "group", "count": "n"})


def metadata_columns(examples: pd.DataFrame, max_levels: int = 12) -> list[str]:
    """Metadata columns fit for grouping (few distinct values), e.g. type and level."""
    skip = {"qid", "question", "answer", "parts"}
    out = []
    for c in examples.columns:
        if c in skip:
            continue
        try:
            n = examples[c].nunique(dropna=True)
        except TypeError:  # lists or dicts
            continue
        if 1 < n <= max_levels:
            out.append(c)
    return out


def example_stats(examples: pd.DataFrame) -> pd.DataFrame:
    """Per question: number of parts, mean/min/max part length (chars), question/answer length."""
    parts = examples["parts"].map(list)
    lengths = parts.map(lambda ps: [len(p) for p in ps] or [0])
    return pd.DataFrame({
        "qid": examples["qid"].astype(str),
        "n_parts": parts.map(len),
        "part_chars_mean": lengths.map(np.mean),
        "part_chars_min": lengths.map(min),
        "part_chars_max": lengths.map(max),
        "question_chars": examples["question"].str.len(),
        "answer_chars": examples["answer"].astype(str).str.len(),
    })


# --- per-question tables --------------------------------------------------------------------


def judge_wide(judgments: pd.DataFrame | None) -> pd.DataFrame:
    """qid × system judge scores (NaN for errors or missing)."""
    if judgments is None or judgments.empty:
        return pd.DataFrame()
    j = judgments.assign(qid=judgments["qid"].astype(str))
    j = j.drop_duplicates(["qid", "system"], keep="last")
    return j.pivot(index="qid", columns="system", values="score").astype("Float64")


def per_question(examples: pd.DataFrame, ir: pd.DataFrame, budget: int,
                 judgments: pd.DataFrame | None = None, order: Sequence[str] = ()
                 ) -> pd.DataFrame:
    """One row per question: qid, question, answer, metadata, n_parts, `ir:<retriever>` at
    `budget` and `judge:<system>` columns."""
    meta = [c for c in examples.columns if c not in ("parts",)]
    out = examples[meta].assign(qid=examples["qid"].astype(str),
                                n_parts=examples["parts"].map(len))
    scores = score_matrix(ir, budget)
    scores = scores[order_systems(scores.columns, order)]
    out = out.merge(scores.add_prefix("ir:"), left_on="qid", right_index=True, how="left")
    jw = judge_wide(judgments)
    if not jw.empty:
        jw = jw[order_systems(jw.columns, order)]
        out = out.merge(jw.add_prefix("judge:"), left_on="qid", right_index=True, how="left")
    return out.reset_index(drop=True)


def long_scores(ir: pd.DataFrame, judgments: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every (qid, retriever, budget) Score_IR with the judge score of that retriever's answer."""
    cols = [c for c in ("qid", "retriever", "budget", "score", "context_tokens", "reached")
            if c in ir.columns]
    out = ir[cols].assign(qid=ir["qid"].astype(str))
    if "part_scores" in ir.columns:
        out["part_scores"] = ir["part_scores"].map(lambda v: ";".join(f"{x:.4f}" for x in v))
    if judgments is not None and not judgments.empty:
        j = judgments.assign(qid=judgments["qid"].astype(str)).drop_duplicates(
            ["qid", "system"], keep="last")
        out = out.merge(j[["qid", "system", "score"]].rename(
            columns={"system": "retriever", "score": "judge"}), on=["qid", "retriever"],
            how="left")
    return out


# --- paired comparisons ---------------------------------------------------------------------


def win_tie_loss(ir: pd.DataFrame, a: str, b: str, budget: int, tol: float = 1e-9) -> dict:
    """How often `a` scores above, equal to (within `tol`) or below `b` on the same question."""
    m = score_matrix(ir, budget)[[a, b]].dropna()
    d = m[a] - m[b]
    return {"win": int((d > tol).sum()), "tie": int((d.abs() <= tol).sum()),
            "loss": int((d < -tol).sum()), "n": int(len(d))}


def paired_test(ir: pd.DataFrame, a: str, b: str, budget: int) -> dict:
    """Wilcoxon signed-rank test of a − b over questions (zero differences dropped, 'wilcox').

    Returns {statistic, pvalue, n, n_nonzero, mean_diff, median_diff}; pvalue is None when every
    difference is zero or there are fewer than 2 non-zero differences.
    """
    from scipy.stats import wilcoxon

    m = score_matrix(ir, budget)[[a, b]].dropna()
    d = (m[a] - m[b]).to_numpy()
    nz = int((np.abs(d) > 1e-12).sum())
    out = {"statistic": None, "pvalue": None, "n": int(len(d)), "n_nonzero": nz,
           "mean_diff": float(d.mean()) if len(d) else float("nan"),
           "median_diff": float(np.median(d)) if len(d) else float("nan")}
    if nz >= 2:
        res = wilcoxon(d[np.abs(d) > 1e-12], zero_method="wilcox")
        out.update(statistic=float(res.statistic), pvalue=float(res.pvalue))
    return out


def pairwise(ir: pd.DataFrame, retrievers: Sequence[str], budget: int) -> pd.DataFrame:
    """Every pair of `retrievers`: win/tie/loss, mean difference, Wilcoxon p and Holm-adjusted p."""
    rows = []
    for a, b in itertools.combinations(retrievers, 2):
        w = win_tie_loss(ir, a, b, budget)
        t = paired_test(ir, a, b, budget)
        rows.append({"a": a, "b": b, **w, "mean_diff": t["mean_diff"],
                     "median_diff": t["median_diff"], "pvalue": t["pvalue"]})
    out = pd.DataFrame(rows, columns=["a", "b", "win", "tie", "loss", "n", "mean_diff",
                                      "median_diff", "pvalue"])
    out["p_holm"] = holm(out["pvalue"].tolist())
    return out


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm–Bonferroni adjusted p-values (None stays None)."""
    idx = [i for i, p in enumerate(pvalues) if p is not None and not np.isnan(p)]
    order = sorted(idx, key=lambda i: pvalues[i])
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * float(pvalues[i])))
        out[i] = running
    return out


def difference_curve(ir: pd.DataFrame, a: str, b: str, n_boot: int = 1000, level: float = 0.95,
                     seed: int = 0) -> pd.DataFrame:
    """Mean paired difference a − b per budget with a bootstrap band: budget, mean, lo, hi, n."""
    rng = np.random.default_rng(seed)
    pa = ir[ir["retriever"] == a].pivot_table(index="qid", columns="budget", values="score")
    pb = ir[ir["retriever"] == b].pivot_table(index="qid", columns="budget", values="score")
    d = (pa - pb).dropna(how="any").sort_index(axis=1)
    values = d.to_numpy()
    n = len(values)
    if n == 0:
        return pd.DataFrame(columns=["budget", "mean", "lo", "hi", "n"])
    counts = rng.multinomial(n, np.full(n, 1 / n), size=n_boot)
    boots = counts @ values / n
    alpha = (1 - level) / 2
    lo, hi = np.quantile(boots, [alpha, 1 - alpha], axis=0)
    return pd.DataFrame({"budget": [int(c) for c in d.columns], "mean": values.mean(axis=0),
                         "lo": lo, "hi": hi, "n": n})


def largest_differences(ir: pd.DataFrame, examples: pd.DataFrame, a: str, b: str, budget: int,
                        n: int = 10) -> pd.DataFrame:
    """The `n` questions where a − b is largest in absolute value: qid, question, a, b, diff."""
    m = score_matrix(ir, budget)[[a, b]].dropna()
    m["diff"] = m[a] - m[b]
    m = m.reindex(m["diff"].abs().sort_values(ascending=False, kind="stable").index).head(n)
    q = examples.assign(qid=examples["qid"].astype(str)).set_index("qid")["question"]
    m.insert(0, "question", q.reindex(m.index).to_numpy())
    return m.reset_index()


# --- evidence positions ---------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    """The longest match of relevant part `part` (index) in a context: context[start:end]."""

    part: int
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


def longest_match(part: str, text: str) -> tuple[int, int]:
    """(start in text, length) of the longest common substring of `part` and `text`; the
    earliest in `text` among the longest. (0, 0) when nothing matches."""
    if not part or not text:
        return 0, 0
    sm = difflib.SequenceMatcher(None, text, part, autojunk=False)
    m = sm.find_longest_match(0, len(text), 0, len(part))
    return (m.a, m.size) if m.size else (0, 0)


def part_matches(parts: Sequence[str], context: str, cut: int | None = None) -> list[Match]:
    """Where each part's longest common substring with C_N = context[:cut] lies (one per part).

    The lengths equal `ragdash.scoring.part_scores(..., method="substring")` × len(part).
    """
    prefix = context if cut is None else context[:cut]
    out = []
    for i, p in enumerate(parts):
        start, size = longest_match(p, prefix)
        out.append(Match(i, start, start + size))
    return out


def question_chunks(retrieved: pd.DataFrame, chunks: pd.DataFrame, qid: str
                    ) -> dict[str, pd.DataFrame]:
    """{retriever: the chunks it retrieved for `qid` in rank order}, columns rank, chunk_id,
    title, text, score; the context is their texts joined with one space (budget.join_chunks)."""
    r = retrieved[retrieved["qid"].astype(str) == str(qid)].sort_values(["retriever", "rank"])
    info = chunks.set_index("chunk_id")
    cols = [c for c in ("title", "text") if c in info.columns]
    out = {}
    for ret, g in r.groupby("retriever", sort=False):
        got = info.reindex(g["chunk_id"])[cols].reset_index()
        got.insert(0, "rank", g["rank"].to_numpy())
        got["score"] = g["score"].to_numpy()
        got["text"] = got["text"].fillna("")
        out[str(ret)] = got
    return out


def chunk_offsets(texts: Sequence[str]) -> list[int]:
    """Start offset of each chunk in the context (chunks joined with one space)."""
    starts, at = [], 0
    for t in texts:
        starts.append(at)
        at += len(t) + 1
    return starts


# --- judge scores and LLM usage --------------------------------------------------------------


def primary(frame: pd.DataFrame | None, budget: int | None = None) -> pd.DataFrame | None:
    """One row per (qid, system) of an answers or judgments frame.

    A budget sweep (one retriever answered at several N) keeps `budget` (default: the largest
    budget present) and LLM-only rows; with several judge models the most frequent one is kept.
    """
    if frame is None or frame.empty:
        return frame
    df = frame
    if "judge_model" in df.columns and df["judge_model"].nunique(dropna=True) > 1:
        df = df[df["judge_model"] == df["judge_model"].value_counts().idxmax()]
    if "budget" in df.columns and df.duplicated(["qid", "system"]).any():
        have = pd.to_numeric(df["budget"], errors="coerce")
        keep = budget if budget is not None and (have == budget).any() else have.max()
        df = df[have.isna() | (have == keep)]
    return df


def sweep_distribution(judgments: pd.DataFrame) -> pd.DataFrame:
    """Judge-score counts per (system, budget) for systems judged at several budgets (the
    paper's Table 3.2 pilot); empty when there is no sweep. Columns: system, budget, score,
    count, share."""
    if judgments is None or "budget" not in judgments.columns:
        return pd.DataFrame(columns=["system", "budget", "score", "count", "share"])
    j = judgments.dropna(subset=["budget"])
    multi = j.groupby("system")["budget"].nunique()
    j = j[j["system"].isin(multi[multi > 1].index)]
    rows = []
    for (sys_, b), g in j.groupby(["system", "budget"]):
        valid = g["score"].dropna().astype(int)
        for s in SCORES:
            c = int((valid == s).sum())
            rows.append((sys_, int(b), s, c, c / len(valid) if len(valid) else float("nan")))
    return pd.DataFrame(rows, columns=["system", "budget", "score", "count", "share"])


def judge_distribution(judgments: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """Counts and shares of judge scores 1–5 per system (the paper's Table 3.3).

    Columns: system, score, count, share (of valid scores), n_valid, n_errors. Null scores are
    errors, counted apart and never in the shares.
    """
    j = judgments.drop_duplicates(["qid", "system"], keep="last")
    rows = []
    for sys_ in order_systems(j["system"], order):
        g = j[j["system"] == sys_]
        valid = g["score"].dropna().astype(int)
        n = len(valid)
        for s in SCORES:
            c = int((valid == s).sum())
            rows.append((sys_, s, c, c / n if n else float("nan"), n, int(g["score"].isna().sum())))
    return pd.DataFrame(rows, columns=["system", "score", "count", "share", "n_valid",
                                       "n_errors"])


def table_3_3(judgments: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """System × score shares (rows sum to 1 over valid judgments), plus n and errors."""
    d = judge_distribution(judgments, order)
    t = d.pivot(index="system", columns="score", values="share")
    t = t.reindex(d["system"].drop_duplicates())
    t.columns = [str(c) for c in t.columns]
    first = d.drop_duplicates("system").set_index("system")
    t["n"] = first["n_valid"]
    t["errors"] = first["n_errors"]
    return t


def llm_vs_rag(judgments: pd.DataFrame, system: str) -> pd.DataFrame:
    """Crosstab of the LLM-only judge score (rows) against `system`'s (columns), valid pairs."""
    w = judge_wide(judgments)
    if LLM_ONLY not in w.columns or system not in w.columns:
        return pd.DataFrame()
    pair = w[[LLM_ONLY, system]].dropna().astype(int)
    return pd.crosstab(pair[LLM_ONLY], pair[system]).reindex(
        index=SCORES, columns=SCORES, fill_value=0)


def rag_gain(judgments: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """Per RAG system, on questions judged for both it and LLM-only: share correct (5) with
    retrieval vs without, and how many answers were fixed (LLM-only ≠ 5, RAG = 5) or broken."""
    w = judge_wide(judgments)
    rows = []
    if LLM_ONLY not in w.columns:
        return pd.DataFrame(columns=["system", "n", "rag_correct", "llm_only_correct", "fixed",
                                     "broken"])
    for sys_ in order_systems(w.columns, order):
        if sys_ == LLM_ONLY:
            continue
        p = w[[LLM_ONLY, sys_]].dropna()
        lo, rag = p[LLM_ONLY] == 5, p[sys_] == 5
        rows.append({"system": sys_, "n": len(p), "rag_correct": float(rag.mean()),
                     "llm_only_correct": float(lo.mean()), "fixed": int((rag & ~lo).sum()),
                     "broken": int((~rag & lo).sum())})
    return pd.DataFrame(rows)


def errors_table(answers: pd.DataFrame | None, judgments: pd.DataFrame | None) -> pd.DataFrame:
    """Failed generations and judgments, shown apart: stage, qid, system, error."""
    frames = []
    for stage, df in (("generation", answers), ("judging", judgments)):
        if df is None or df.empty or "error" not in df.columns:
            continue
        bad = df[df["error"].notna() & (df["error"].astype(str) != "")]
        frames.append(pd.DataFrame({"stage": stage, "qid": bad["qid"].astype(str),
                                    "system": bad["system"], "error": bad["error"].astype(str)}))
    if not frames:
        return pd.DataFrame(columns=["stage", "qid", "system", "error"])
    return pd.concat(frames, ignore_index=True)


def usage(answers: pd.DataFrame, order: Sequence[str] = ()) -> pd.DataFrame:
    """Per system: calls, errors, median and p90 latency (s), mean tokens in/out."""
    rows = []
    for sys_ in order_systems(answers["system"], order):
        g = answers[answers["system"] == sys_]
        lat = g["latency_s"].dropna()
        rows.append({"system": sys_, "calls": len(g),
                     "errors": int(g["error"].notna().sum()) if "error" in g else 0,
                     "latency_median_s": float(lat.median()) if len(lat) else np.nan,
                     "latency_p90_s": float(lat.quantile(0.9)) if len(lat) else np.nan,
                     "tokens_in_mean": float(g["tokens_in"].astype(float).mean()),
                     "tokens_out_mean": float(g["tokens_out"].astype(float).mean())})
    return pd.DataFrame(rows)


def costs(answers: pd.DataFrame | None, judgments: pd.DataFrame | None) -> pd.DataFrame:
    """Actual calls, tokens, USD and summed latency per stage and model (ragdash.llm.cost)."""
    from ragdash.llm.cost import actual_cost

    frames = []
    for stage, df in (("generation", answers), ("judging", judgments)):
        needed = {"tokens_in", "tokens_out", "latency_s"}
        if df is None or df.empty or not needed <= set(df.columns):
            continue
        frames.append(actual_cost(df).assign(stage=stage))
    if not frames:
        return pd.DataFrame(columns=["stage", "model", "calls", "tokens_in", "tokens_out", "usd",
                                     "latency_s"])
    out = pd.concat(frames, ignore_index=True)
    return out[["stage", "model", "calls", "tokens_in", "tokens_out", "usd", "latency_s"]]


# --- thresholds -------------------------------------------------------------------------------


@dataclass
class ThresholdData:
    """Everything the threshold panel needs at one budget, computed once; `panel()` is cheap."""

    budget: int
    retrievers: list[str]
    sorted_ir: dict[str, np.ndarray]  # retriever -> IR scores ascending
    pairs: pd.DataFrame | None  # qid, retriever, ir, judge (None without judgments)
    fit_h: float | None
    fit_k: float | None
    objective_h: pd.DataFrame | None  # threshold, agreement
    objective_k: pd.DataFrame | None
    n_excluded: int = 0

    @property
    def has_judgments(self) -> bool:
        return self.pairs is not None and not self.pairs.empty


def threshold_data(ir: pd.DataFrame, judgments: pd.DataFrame | None, budget: int,
                   order: Sequence[str] = (), calibration: dict | None = None,
                   grid: int = 401) -> ThresholdData:
    """Sort the scores, join judge scores and fit h and k at `budget` (the calibration's own
    values when it was fitted at this budget)."""
    from ragdash.calibrate import pairs as make_pairs

    at = at_budget(ir, budget)
    rets = order_systems(at["retriever"], order)
    sorted_ir = {r: np.sort(at.loc[at["retriever"] == r, "score"].to_numpy(float)) for r in rets}
    data = ThresholdData(budget, rets, sorted_ir, None, None, None, None, None)
    if judgments is None or judgments.empty or judgments["score"].notna().sum() == 0:
        return data
    try:
        p, info = make_pairs(ir, judgments, budget)
    except ValueError:
        return data
    data.pairs, data.n_excluded = p, info["n_excluded"]
    x, judge = p["ir"].to_numpy(float), p["judge"].to_numpy()
    if calibration and int(calibration.get("budget", -1)) == int(budget) and \
            calibration.get("scope", "pooled") == "pooled":
        data.fit_h, data.fit_k = float(calibration["h"]), float(calibration["k"])
    else:
        data.fit_h = fit_threshold(x, judge == 1, "<").threshold
        data.fit_k = fit_threshold(x, judge == 5, ">").threshold
    g = np.linspace(0, 1, grid)
    data.objective_h = objective_curve(x, judge == 1, "<", grid=g)
    data.objective_k = objective_curve(x, judge == 5, ">", grid=g)
    return data


def fit_diagnosis(data: ThresholdData) -> list[str]:
    """Plain-language notes on fits that carry no information: no answer in the class, or a
    threshold that only reproduces "never" (Score_IR does not separate the class)."""
    if not data.has_judgments or data.fit_h is None or data.fit_k is None:
        return []
    x, judge = data.pairs["ir"].to_numpy(float), data.pairs["judge"].to_numpy()
    notes = []
    for name, cls, thr, never in (("k", 5, data.fit_k, data.fit_k >= x.max()),
                                  ("h", 1, data.fit_h, data.fit_h <= x.min())):
        hit = judge == cls
        what = "fully correct (5)" if cls == 5 else "lacking information (1)"
        if not hit.any() or hit.all():
            notes.append(f"{'No' if not hit.any() else 'Every'} answer was judged {what}, so "
                         f"{name} = {thr:.3f} is arbitrary: any {name} that puts every answer "
                         f"{'outside' if not hit.any() else 'inside'} the class fits.")
        elif never:
            notes.append(
                f"No {name} beats predicting that no answer is {what} (agreement "
                f"{1 - hit.mean():.1%}, the share of the other answers): Score_IR does not "
                f"separate these answers here (mean Score_IR {x[hit].mean():.2f} for the "
                f"{int(hit.sum())} judged {cls}, {x[~hit].mean():.2f} for the others). The LLM "
                "may answer without the retrieved facts, or fail despite them: compare with "
                "the logistic estimator below.")
    return notes


def estimated_shares(data: ThresholdData, h: float, k: float) -> pd.DataFrame:
    """Per retriever: n and estimated shares (fractions) below h, between, above k (strict at
    both ends, as `ragdash.calibrate.rule_class`; above k wins when h > k)."""
    rows = []
    for r in data.retrievers:
        s = data.sorted_ir[r]
        n = len(s)
        above = n - np.searchsorted(s, k, side="right")
        below = min(int(np.searchsorted(s, h, side="left")), n - above)
        rows.append((r, n, below / n, (n - above - below) / n, above / n))
    return pd.DataFrame(rows, columns=["retriever", "n", "est_1", "est_2_4", "est_5"])


def panel(data: ThresholdData, h: float, k: float) -> dict:
    """The threshold panel's numbers for (h, k): estimated shares per retriever; with judgments
    also actual shares, errors (pp), the pooled confusion matrix and both agreements."""
    est = estimated_shares(data, h, k)
    out: dict = {"estimated": est}
    if not data.has_judgments:
        return out
    p = data.pairs
    est_cls = rule_class(p["ir"].to_numpy(float), h, k)
    act_cls = judge_class(p["judge"].to_numpy())
    conf = np.zeros((3, 3), dtype=int)
    np.add.at(conf, (est_cls, act_cls), 1)
    codes, names = pd.factorize(p["retriever"])
    n_r = len(names)
    cnt_est = np.zeros((n_r, 3))
    cnt_act = np.zeros((n_r, 3))
    np.add.at(cnt_est, (codes, est_cls), 1)
    np.add.at(cnt_act, (codes, act_cls), 1)
    tot = cnt_act.sum(axis=1, keepdims=True)
    cmp = pd.DataFrame({"retriever": names, "n": tot[:, 0].astype(int)})
    for i, c in enumerate(("1", "2_4", "5")):
        cmp[f"est_{c}"] = cnt_est[:, i] / tot[:, 0] * 100
        cmp[f"act_{c}"] = cnt_act[:, i] / tot[:, 0] * 100
        cmp[f"err_{c}"] = cmp[f"est_{c}"] - cmp[f"act_{c}"]
    cmp["mae"] = cmp[["err_1", "err_2_4", "err_5"]].abs().mean(axis=1)
    cmp = cmp.set_index("retriever").reindex(
        [r for r in data.retrievers if r in set(names)]).reset_index()
    x, judge = p["ir"].to_numpy(float), p["judge"].to_numpy()
    out.update(
        compare=cmp,
        confusion=pd.DataFrame(conf, index=pd.Index(CLASSES, name="estimated"),
                               columns=pd.Index(CLASSES, name="actual")),
        agreement_h=float(((x < h) == (judge == 1)).mean()),
        agreement_k=float(((x > k) == (judge == 5)).mean()),
        accuracy=float((est_cls == act_cls).mean()),
        mae=float(cmp["mae"].mean()),
    )
    return out


def downsample_sorted(values: np.ndarray, points: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """(index, value) of a sorted curve at ≤ `points` evenly spaced ranks (ends included)."""
    n = len(values)
    if n <= points:
        return np.arange(n), values
    idx = np.unique(np.linspace(0, n - 1, points).round().astype(int))
    return idx, values[idx]


# --- headline numbers --------------------------------------------------------------------------


def best_retriever(ir: pd.DataFrame, budget: int) -> tuple[list[str], float]:
    """The retrievers with the highest mean Score_IR at `budget` (several on a tie, to 1e-9),
    and that mean."""
    means = at_budget(ir, budget).groupby("retriever", sort=False)["score"].mean()
    top = float(means.max())
    return [str(r) for r, m in means.items() if m >= top - 1e-9], top


def correct_share_summary(calibration: dict) -> dict:
    """Pooled estimated and actual share of 'correct' answers (%) from calibration.json."""
    t = pd.DataFrame(calibration.get("per_retriever") or [])
    if t.empty:
        return {}
    w = t["n"] / t["n"].sum()
    return {"estimated_pct": float((t["est_5"] * w).sum()), "actual_pct": float(
        (t["act_5"] * w).sum()), "mae_pp": float(t["mae"].mean())}


def estimator_summary(cv: pd.DataFrame) -> pd.DataFrame:
    """Mean per-retriever share error (pp) of each estimator under each validation scheme.

    `cv` is `ragdash.calibrate.cross_validate`'s table (or the run's estimator_cv.csv).
    """
    return (cv.groupby(["scheme", "method"], sort=False)["mae"].mean()
            .rename("mae").reset_index())
