"""Do the signals rank the systems the same way? Per system and per signal (Score_IR at N, the
1-5 judge as a quality order, the reference metrics, each RAGAS and RAGChecker metric, the
truth), the mean over questions with its 95 % interval (`survey.mean_interval`, over the
signal's range); then each signal's order of the systems and Kendall's tau-b (Kendall
1945, adjusted for ties; `scipy.stats.kendalltau`) between it and a reference
order (the truth where there is one, else Score_IR), with a summary grouping the signals by
verdict (same order, ties only, partly, unrelated or reversed, no order).

The input is `signals.answer_signals`'s frame: one row per answer (qid, system), a column per
signal, NaN where a system has no value (the LLM-only answers have no Score_IR; a run without a
metrics stage has no metric column). A mean is over the questions where the signal exists; a
system without any value has no mean ("–"), never 0."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from ragdash.analysis.signals import direction, signal_label, signal_range
from ragdash.calibration.survey import mean_interval
from ragdash.constants import label

MEANS_COLUMNS = ["system", "signal", "mean", "lo", "hi", "n"]
AGREEMENT_COLUMNS = ["signal", "order", "systems", "tau", "tau_lo", "tau_hi", "agree", "disagree",
                     "split", "pairs"]
DASH = "–"
SAME = 1e-9
"""Two means closer than this are a tie."""


def system_means(frame: pd.DataFrame, signals: Sequence[str],
                 systems: Sequence[str] | None = None, *, group: str = "qid",
                 level: float = 0.95) -> pd.DataFrame:
    """One row per (system, signal) (MEANS_COLUMNS): the mean over the questions where the
    signal exists, its interval (lo, hi) over those questions (`survey.mean_interval` over
    `signal_range`), and n.
    A system's answers to one question are averaged first (one value per question). No value:
    mean, lo and hi NaN, n 0. `systems`: which and in what order (default: as they appear)."""
    missing = [s for s in signals if s not in frame.columns]
    if missing:
        raise ValueError(f"no signal column {', '.join(map(repr, missing))}")
    order = list(systems) if systems is not None else list(dict.fromkeys(frame["system"]))
    rows = []
    for system in order:
        mine = frame[frame["system"] == system]
        for name in signals:
            per_q = mine[[group, name]].dropna().groupby(group)[name].mean()
            values = per_q.to_numpy(dtype=float)
            if not len(values):
                rows.append((system, name, np.nan, np.nan, np.nan, 0))
                continue
            lo, hi = mean_interval(values[:, None], signal_range(name), level)
            rows.append((system, name, float(values.mean()), float(lo[0]), float(hi[0]),
                         len(values)))
    out = pd.DataFrame(rows, columns=MEANS_COLUMNS)
    return out.astype({"mean": float, "lo": float, "hi": float, "n": int})


def cell(mean: float, lo: float, hi: float, n: int, n_usual: int | None = None) -> str:
    """'0.712 [0.650–0.779]' (with ' · n=40' when n differs from the usual n), '–' without a
    value."""
    if n == 0 or pd.isna(mean):
        return DASH
    text = f"{mean:.3f} [{lo:.3f}–{hi:.3f}]"
    return text if n_usual is None or n == n_usual else f"{text} · n={n}"


def means_table(means: pd.DataFrame, signals: Sequence[str] | None = None,
                name=label, reference: str | None = None) -> pd.DataFrame:
    """Systems as rows, signals as columns (their display names, the `reference`'s marked),
    each cell `cell(...)`; the column `questions` holds a system's largest n, and a cell over
    fewer questions says so."""
    signals = list(signals) if signals is not None else list(dict.fromkeys(means["signal"]))
    systems = list(dict.fromkeys(means["system"]))
    heads = {s: signal_label(s) + (" (reference)" if s == reference else "") for s in signals}
    rows = []
    for system in systems:
        mine = means[means["system"] == system].set_index("signal")
        usual = int(mine["n"].max()) if len(mine) else 0
        row = {"system": name(system), "questions": usual}
        for s in signals:
            r = mine.loc[s] if s in mine.index else None
            row[heads[s]] = (DASH if r is None else
                             cell(r["mean"], r["lo"], r["hi"], int(r["n"]), usual))
        rows.append(row)
    return pd.DataFrame(rows, columns=["system", "questions", *heads.values()])


def order_text(values: pd.Series, name=label) -> str:
    """The systems (the index) best first, ties joined by '=': 'BM25 > SIM = MMR > LLM only'
    (NaN left out)."""
    v = values.dropna().sort_values(ascending=False, kind="stable")
    out, last = "", None
    for system, x in v.items():
        if last is not None:
            out += " = " if abs(last - x) <= SAME else " > "
        out += name(system)
        last = x
    return out


@dataclass(frozen=True)
class Tau:
    """Kendall's tau-b between two orders of the systems both rank, with the pair counts: a pair
    tied in both orders agrees; one tied in one order only is `split`."""

    tau: float  # NaN: fewer than 2 systems, or one order ties every system
    systems: int
    agree: int  # same direction in both, or tied in both
    disagree: int  # opposite directions
    split: int  # tied in one order only

    @property
    def pairs(self) -> int:
        return self.agree + self.disagree + self.split

    @property
    def same(self) -> bool:
        """Both orders are the same (ties included)."""
        return self.systems >= 2 and not np.isnan(self.tau) and not self.disagree \
            and not self.split


def kendall(a: pd.Series, b: pd.Series) -> Tau:
    """Kendall's tau-b of two score series indexed by system, over the systems where both have a
    value (higher = better in both; means closer than SAME tie)."""
    both = pd.concat([a, b], axis=1, join="inner").dropna()
    x, y = both.iloc[:, 0].to_numpy(float), both.iloc[:, 1].to_numpy(float)
    agree = disagree = split = 0
    for i, j in combinations(range(len(x)), 2):
        tx, ty = abs(x[i] - x[j]) <= SAME, abs(y[i] - y[j]) <= SAME
        if tx and ty or not tx and not ty and (x[i] > x[j]) == (y[i] > y[j]):
            agree += 1
        elif tx or ty:
            split += 1
        else:
            disagree += 1
    tau = float("nan")
    if len(x) >= 2 and np.ptp(x) > SAME and np.ptp(y) > SAME:
        tau = float(kendalltau(np.round(x, 9), np.round(y, 9)).statistic)
    return Tau(tau, len(x), agree, disagree, split)


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def rank_agreement(means: pd.DataFrame, signals: Sequence[str], reference: str,
                   name=label, intervals: dict[str, tuple[float, float]] | None = None
                   ) -> pd.DataFrame:
    """One row per signal other than `reference` (AGREEMENT_COLUMNS): its order of the systems
    (`order_text`), Kendall's tau-b with the reference's order over the systems both have (with
    its interval from `intervals`, `tau_intervals`) and the pair counts. Sorted by
    tau, the closest to the reference first."""
    wide = means.pivot_table(index="system", columns="signal", values="mean", aggfunc="first",
                             sort=False, dropna=False)
    if reference not in wide.columns:
        raise ValueError(f"no reference signal {reference!r} in the means")
    rows = []
    for s in signals:
        if s == reference or s not in wide.columns:
            continue
        t = kendall(wide[s] * direction(s), wide[reference] * direction(reference))
        lo, hi = (intervals or {}).get(s, (np.nan, np.nan))
        rows.append({"signal": s, "order": order_text(wide[s] * direction(s), name),
                     "systems": t.systems,
                     "tau": t.tau, "tau_lo": lo, "tau_hi": hi, "agree": t.agree,
                     "disagree": t.disagree, "split": t.split, "pairs": t.pairs})
    out = pd.DataFrame(rows, columns=AGREEMENT_COLUMNS).astype(
        {"tau": float, "tau_lo": float, "tau_hi": float})
    return out.sort_values("tau", ascending=False, na_position="last", kind="stable") \
        .reset_index(drop=True)


def _pair_signs(means: np.ndarray, gone: np.ndarray) -> np.ndarray:
    """sign(m_i - m_j) for every pair i < j of the last axis: 0 for a tie (|d| <= SAME) and for
    a pair with a system in `gone` (same shape as `means`)."""
    i, j = np.triu_indices(means.shape[-1], 1)
    d = means[..., i] - means[..., j]
    out = np.where(np.abs(d) <= SAME, 0.0, np.sign(d))
    return np.where(gone[..., i] | gone[..., j], 0.0, out)


def tau_intervals(frame: pd.DataFrame, signals: Sequence[str], reference: str,
                  systems: Sequence[str], *, group: str = "qid", n_boot: int = 1000,
                  level: float = 0.95, seed: int = 0) -> dict[str, tuple[float, float]]:
    """{signal: percentile bootstrap interval of its Kendall's tau-b with `reference`}: the
    questions are resampled (the same draw for every system and signal), each system's means
    recomputed, and tau-b = sum(sx * sy) / sqrt(sum(sx^2) * sum(sy^2)) over the signs of the
    pairs' differences (a system without a mean on either side in a draw leaves its pairs
    out). NaN where no draw has a tau (fewer than 2 systems, every system tied)."""
    qids = sorted(set(frame[group]))
    if len(systems) < 2 or not qids:
        return {s: (np.nan, np.nan) for s in signals}

    def matrix(col: str) -> np.ndarray:
        m = frame.pivot_table(index=group, columns="system", values=col, aggfunc="mean",
                              dropna=False)
        return m.reindex(index=qids, columns=list(systems)).to_numpy(float) * direction(col)

    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(qids), np.full(len(qids), 1 / len(qids)), size=n_boot)

    def boot_means(values: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return (counts @ np.nan_to_num(values)) / (counts @ ~np.isnan(values))

    my = boot_means(matrix(reference))
    alpha = (1 - level) / 2
    out = {}
    for name in signals:
        mx = boot_means(matrix(name))
        gone = np.isnan(mx) | np.isnan(my)
        sx, sy = _pair_signs(mx, gone), _pair_signs(my, gone)
        with np.errstate(invalid="ignore", divide="ignore"):
            taus = (sx * sy).sum(1) / np.sqrt((sx * sx).sum(1) * (sy * sy).sum(1))
        taus = taus[np.isfinite(taus)]
        out[name] = ((float(np.quantile(taus, alpha)), float(np.quantile(taus, 1 - alpha)))
                     if len(taus) else (np.nan, np.nan))
    return out


@dataclass(frozen=True)
class RankSummary:
    """The rank agreement in words: a headline, the signals grouped by verdict (`VERDICTS`'
    titles, each signal with its pair counts), and whether the reversals are beyond the noise.
    `str()` is the plain text (the CLI's); the pages render the parts."""

    headline: str
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    noise: str = ""

    def __str__(self) -> str:
        lines = [self.headline, *(f"- {title}: {', '.join(who)}" for title, who in self.groups)]
        return "\n".join(lines + ([self.noise] if self.noise else []))


VERDICTS = {
    "same": "Same order as the reference (tau 1.00)",
    "ties": "Same order but for ties (a coarse signal here, not a contrary one: it reverses "
            "no pair)",
    "partly": "Partly the same order (reverses some pairs)",
    "contrary": "Unrelated or reversed order (tau ≤ 0)",
    "none": "No order to compare (every system tied there or in the reference, unless said)",
}
"""The verdicts on a signal's order of the systems against the reference's, in display order."""


def verdict(t: Tau) -> str:
    """The `VERDICTS` key of a signal whose order has the pair counts `t`."""
    if t.systems < 2 or np.isnan(t.tau):
        return "none"
    if t.same:
        return "same"
    if not t.disagree:
        return "ties"
    return "partly" if t.tau > 0 else "contrary"


def tau_of(row: dict) -> Tau:
    """The Tau of a row of the agreement table."""
    return Tau(row["tau"], row["systems"], row["agree"], row["disagree"], row["split"])


def pairs_text(t: Tau, n_systems: int, with_tau: bool = True) -> str:
    """'2 of 15 pairs reversed, tau 0.71' for a signal's Tau ('' for the same order over every
    one of the `n_systems`; the systems it covers when fewer)."""
    of = f"{t.systems} of the {n_systems} systems" if t.systems != n_systems else ""
    if t.systems < 2:
        return "fewer than 2 systems with a value"
    if np.isnan(t.tau):
        return "every system tied there or in the reference"
    parts = [f"{t.disagree} of {t.pairs} pair{'s' if t.pairs > 1 else ''} reversed"] \
        if t.disagree else []
    if t.split:
        parts.append(f"{t.split} pair{'s' if t.split > 1 else ''} tied in one order only")
    if not parts:
        return of
    return ", ".join(parts + ([f"tau {t.tau:.2f}"] if with_tau else []) + ([of] if of else []))


def summary(agreement: pd.DataFrame, reference: str, n_systems: int,
            reference_name: str | None = None) -> RankSummary:
    """Which signals order the systems as the reference does and which do not, grouped by
    `verdict`, each with its pair counts (`reference_name`: how to call the reference; default
    its display name)."""
    ref = reference_name or signal_label(reference)
    if n_systems < 2:
        return RankSummary(f"One system only: no order to compare ({ref} is the reference).")
    if agreement.empty:
        return RankSummary(
            f"No signal besides {ref} to compare its order of the {n_systems} systems with.")
    groups: dict[str, list[str]] = {k: [] for k in VERDICTS}
    for r in agreement.to_dict("records"):
        t = tau_of(r)
        detail = pairs_text(t, n_systems) if t.systems < 2 or not np.isnan(t.tau) else ""
        groups[verdict(t)].append(signal_label(r["signal"]) + (f" ({detail})" if detail else ""))
    return RankSummary(f"Against {ref}, {n_systems} systems:",
                       tuple((VERDICTS[k], tuple(who)) for k, who in groups.items() if who),
                       _noise_text(agreement))


def _noise_text(agreement: pd.DataFrame) -> str:
    """'Within the noise: ...' when every signal that reverses a pair has a tau interval
    reaching 1; else the signals whose interval stays below 1 ('' without a reversal or
    without intervals). A signal that only ties systems the reference separates is left out:
    its tau cannot reach 1 in any resample, so its interval says nothing about noise."""
    known = agreement[agreement["tau_hi"].notna()]
    reverse = known[known["disagree"] > 0]
    if reverse.empty:
        return ""
    beyond = reverse[reverse["tau_hi"] < 1 - SAME]
    if beyond.empty:
        return ("Within the noise: each tau of a signal that reverses a pair has a 95 % "
                "interval that reaches 1 (the questions resampled).")
    names = _join([signal_label(s) for s in beyond["signal"]])
    return (f"Beyond the noise for {names}: {'its' if len(beyond) == 1 else 'their'} "
            "tau's 95 % interval stays below 1 (the questions resampled).")


@dataclass(frozen=True)
class SignalBoard:
    """Every signal's mean per system and the rank agreement with the reference order."""

    means: pd.DataFrame  # MEANS_COLUMNS
    agreement: pd.DataFrame  # AGREEMENT_COLUMNS
    signals: tuple[str, ...]  # in display order, the reference first
    systems: tuple[str, ...]
    reference: str
    reference_name: str  # in sentences: 'the truth (contains a gold answer)'
    summary: RankSummary

    def table(self, name=label) -> pd.DataFrame:
        """`means_table` of the board."""
        return means_table(self.means, self.signals, name, self.reference)


def signal_board(frame: pd.DataFrame, signals: Sequence[str], reference: str,
                 systems: Sequence[str] | None = None, *, reference_name: str | None = None,
                 name=label, n_boot: int = 1000, level: float = 0.95, seed: int = 0
                 ) -> SignalBoard:
    """`system_means` of `signals` (the `reference` column among them or added first), the
    `rank_agreement` of the others with it and its `summary`."""
    cols = [reference, *(s for s in signals if s != reference)]
    means = system_means(frame, cols, systems, level=level)
    order = tuple(dict.fromkeys(means["system"]))
    others = [c for c in cols if c != reference]
    intervals = tau_intervals(frame[frame["system"].isin(order)], others, reference, order,
                              n_boot=n_boot, level=level, seed=seed)
    agreement = rank_agreement(means, cols, reference, name, intervals)
    ranked = means[(means["signal"] == reference) & means["mean"].notna()]
    ref_name = reference_name or signal_label(reference)
    return SignalBoard(means, agreement, tuple(cols), order, reference, ref_name,
                       summary(agreement, reference, len(ranked), ref_name))


def tau_cell(row: dict) -> str:
    """'+0.71 [0.47, 1.00]' for a row of the agreement table; '–' without a tau."""
    if pd.isna(row["tau"]):
        return DASH
    if pd.isna(row.get("tau_lo")):
        return f"{row['tau']:+.2f}"
    return f"{row['tau']:+.2f} [{row['tau_lo']:.2f}, {row['tau_hi']:.2f}]"


def format_board(board: SignalBoard, name=label) -> str:
    """The board as plain text (the CLI's): the table, the orders with tau, the summary."""
    table = board.table(name).set_index("system")
    ref = board.reference_name
    at = board.means[board.means["signal"] == board.reference]
    reference = pd.Series(at["mean"].to_numpy(), index=at["system"])
    lines = ["Every signal per system: mean [95% CI over questions]; – = no value",
             table.T.to_string(), "",
             f"Order of the systems per signal, Kendall's tau-b with {ref} [95% bootstrap CI]:"]
    names = [signal_label(s) for s in board.agreement["signal"]]
    width = max([28, len(ref), *map(len, names)])
    lines.append(f"  {ref:<{width}} {'reference':<24} {order_text(reference, name)}")
    for who, r in zip(names, board.agreement.to_dict("records"), strict=True):
        lines.append(f"  {who:<{width}} tau {tau_cell(r):<20} {r['order']}")
    lines.append(str(board.summary))
    return "\n".join(lines)
