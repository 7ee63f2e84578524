"""Several runs side by side (the dashboard's Runs page and `ragdash sweep`): a catalogue of
runs, the check that runs may be compared, and a leaderboard of every (run, retriever) pair on
the questions the runs share: mean Score_IR at N with its interval over questions (the
paper's §2.2 and Table 3.1), the area under its curve over N, chunk-level IR metrics, the share
judged correct (§3.2) and the share the h/k rule estimates (§3.3), tokens and cost. Paired
comparisons of any two pairs come from `ragdash.analysis.compare`.

Runs are compared only when they read the same dataset (same file sha256, same corpus) and
share questions and a budget; otherwise `NotComparable` says why. A pair is named by its entry
id `<run key>::<retriever>`, which stands in the `retriever` column of `Comparison.scores`, so
the single-run functions (`curves.mean_curves`, `compare.difference_curve`, …) apply as is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ragdash.analysis import compare, curves, frames, sentences
from ragdash.analysis.area import curve_area
from ragdash.constants import label
from ragdash.run_spec import run_spec
from ragdash.rundir import Run

SEP = "::"
"""Between the run key and the retriever in an entry id."""
METRICS = ("R@5", "R@10", "nDCG@10")
"""The chunk-level IR metrics the leaderboard shows (from the run's ir_metrics table)."""


class NotComparable(ValueError):
    """Runs that must not be compared (different datasets, no shared question); the message
    says why."""


# --- one run ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """The dataset a run read, as its manifest recorded it."""

    name: str  # file name
    path: str
    sha256: str | None = None
    corpus_sha256: str | None = None

    @property
    def key(self) -> str:
        """What two runs must share to be compared: the file's (and corpus's) sha256, or the
        path when the run recorded no hash."""
        if self.sha256:
            return self.sha256 + (f"+{self.corpus_sha256}" if self.corpus_sha256 else "")
        return f"path:{self.path}"

    @property
    def short(self) -> str:
        return self.sha256[:8] if self.sha256 else "no hash"

    def __str__(self) -> str:
        return f"{self.name} (sha256 {self.short})" if self.sha256 else \
            f"{self.path or self.name} (no hash recorded)"


def dataset_of(run: Run) -> Dataset:
    """The dataset of a run: the ingest stage's `source`, else the config's path (runs made
    before input hashes were recorded)."""
    src = run.manifest.get("source") or {}
    path = str(src.get("dataset") or run_spec(run).dataset.path or "")
    return Dataset(Path(path).name or "(unknown)", path, src.get("sha256"),
                   src.get("corpus_sha256"))


def budgets_text(budgets: Sequence[int]) -> str:
    """`100:1000:100` for an even range of three or more budgets, else `100, 500`."""
    b = sorted(int(x) for x in budgets)
    steps = set(np.diff(b).tolist())
    if len(b) >= 3 and len(steps) == 1:
        return f"{b[0]}:{b[-1]}:{steps.pop()}"
    return ", ".join(map(str, b))


def _params_text(params: Mapping | None, prefix: str = "") -> str:
    """`a=1, b.c=2` from a (nested) mapping."""
    out = []
    for k, v in (params or {}).items():
        if isinstance(v, Mapping):
            out.append(_params_text(v, f"{prefix}{k}."))
        else:
            out.append(f"{prefix}{k}={v}")
    return ", ".join(o for o in out if o)


def _size(run: Run) -> int:
    """Bytes of the run's files, each looked at through the run's reader (so a kept catalogue
    follows them), every declared run file too, found or not (so one written later is seen)."""
    from ragdash.rundir import FILES

    for key in FILES:
        run.has(key)
    return sum(s[2] for f in run.path.rglob("*") if (s := run.reader.stamp(f)) is not None)


CATALOGUE_COLUMNS = ["key", "run", "folder", "varied", "dataset", "sha256", "dataset_key",
                     "questions", "chunker", "chunker_params", "retrievers", "retriever_params",
                     "budgets", "tokenizer", "scoring", "scored", "llm", "judged_correct",
                     "size_mb", "updated"]


def describe(run: Run, key: str | None = None) -> dict:
    """One row of the catalogue: what the run read (dataset file and sha256), how it was made
    (chunker, retrievers and their parameters, budgets, tokenizer, scoring; the values a sweep
    varied), which stages ran, the share judged correct (calibration.json), its size on
    disk."""
    m, spec = run.manifest, run_spec(run)
    ds = dataset_of(run)
    stages = run.stages()

    def done(s: str) -> bool:
        return s in stages and stages[s].done

    cal = run.calibration()
    shares = (cal.shares if cal is not None else None) or {}
    return {
        "key": key or str(run.path), "run": m.get("id", run.path.name),
        "folder": run.path.parent.name,
        "varied": _params_text((m.get("sweep") or {}).get("values")),
        "dataset": ds.name, "sha256": ds.short,
        "dataset_key": ds.key,
        "questions": stages["ingest"].counts.get("examples") if "ingest" in stages else None,
        "chunker": spec.chunker.method or "",
        "chunker_params": _params_text(spec.chunker.params),
        "retrievers": ", ".join(spec.compared),
        "retriever_params": _params_text(spec.retrievers.params)
        or f"preset {spec.retrievers.preset or 'none'}",
        "budgets": budgets_text(spec.budgets), "tokenizer": spec.tokenizer,
        "scoring": f"{spec.scoring.method}, {spec.scoring.mode}",
        "scored": done("score"),
        "llm": ", ".join(s for s in ("generate", "judge", "calibrate") if done(s)) or "no",
        "judged_correct": (shares.get("actual") or {}).get("pct"),
        "size_mb": _size(run) / 1e6, "updated": m.get("updated", ""),
    }


def catalogue(runs: Mapping[str, Run]) -> pd.DataFrame:
    """`describe` of every run ({key: Run}), one row each, in the given order."""
    return pd.DataFrame([describe(r, k) for k, r in runs.items()], columns=CATALOGUE_COLUMNS)


# --- several runs -------------------------------------------------------------------------------


def entry_id(run_key: str, retriever: str) -> str:
    return f"{run_key}{SEP}{retriever}"


def split_entry(entry: str) -> tuple[str, str]:
    """(run key, retriever) of an entry id."""
    key, _, retriever = entry.rpartition(SEP)
    return key, retriever


@dataclass(frozen=True)
class Comparison:
    """Runs made comparable: their Score_IR on the questions and budgets they all have."""

    runs: dict[str, Run]
    names: dict[str, str]  # run key -> display name
    qids: tuple[str, ...]  # the questions every run scored
    budgets: tuple[int, ...]  # the budgets every run scored
    scores: pd.DataFrame  # qid, retriever (= entry id), budget, score, context_tokens
    entries: pd.DataFrame  # entry, run, retriever, name: every (run, retriever), in run order
    examples: pd.DataFrame | None  # the questions (of the first run that has them)
    notes: tuple[str, ...]  # what the reader should know: questions or budgets left out, …

    def name(self, entry: str) -> str:
        """`run · RETRIEVER`."""
        key, retriever = split_entry(entry)
        return f"{self.names.get(key, key)} · {label(retriever)}"

    def matrix(self, budget: int) -> pd.DataFrame:
        """Questions × entries Score_IR at `budget`."""
        return frames.score_matrix(self.scores, budget)


def _names(runs: Mapping[str, Run]) -> dict[str, str]:
    ids = {k: r.id for k, r in runs.items()}
    dup = {v for v in ids.values() if list(ids.values()).count(v) > 1}
    return {k: (k if v in dup else v) for k, v in ids.items()}


def _settings_note(what: str, values: dict[str, str]) -> str | None:
    if len(set(values.values())) <= 1:
        return None
    return (f"The runs use different {what} ("
            + "; ".join(f"{n}: {v}" for n, v in values.items()) + "): their Score_IR are "
            "not measured the same way.")


def _golds(run: Run, qids: set[str]) -> dict[str, tuple[str, ...]]:
    """{qid: its relevant parts} for the questions `qids` of a run."""
    ex = run.read("examples")
    ex = ex[ex["qid"].astype(str).isin(qids)]
    return {str(q): tuple(p) for q, p in zip(ex["qid"], ex["parts"], strict=True)}


def compare_runs(runs: Mapping[str, Run],
                 retrievers: Mapping[str, Sequence[str]] | None = None) -> Comparison:
    """The runs ({key: Run}) on the questions and budgets they all scored; `retrievers` keeps
    only some retrievers of a run. NotComparable when a run has no Score_IR, when the runs read
    different datasets, share no question or budget, or hold different relevant parts for a
    shared question."""
    if not runs:
        raise NotComparable("Pick at least one run.")
    names = _names(runs)
    missing = [names[k] for k, r in runs.items() if not r.has("ir_scores")]
    if missing:
        raise NotComparable(f"{', '.join(missing)} has no retrieval scores yet (its score "
                            "stage has not run), so there is nothing to compare.")
    datasets = {k: dataset_of(r) for k, r in runs.items()}
    if len({d.key for d in datasets.values()}) > 1:
        groups: dict[str, list[str]] = {}
        for k, d in datasets.items():
            groups.setdefault(d.key, [str(d)]).append(names[k])
        raise NotComparable(
            "These runs read different datasets, so their scores cannot be compared: "
            + "; ".join(f"{', '.join(g[1:])} read{'s' if len(g) == 2 else ''} {g[0]}"
                        for g in groups.values())
            + ". Pick runs made on the same dataset file.")
    tables = {k: r.read("ir_scores").assign(qid=lambda d: d["qid"].astype(str))
              for k, r in runs.items()}
    if retrievers:
        tables = {k: t[t["retriever"].isin(retrievers[k])] if k in retrievers else t
                  for k, t in tables.items()}
    qsets = {k: set(t["qid"]) for k, t in tables.items()}
    shared = set.intersection(*qsets.values())
    if not shared:
        raise NotComparable("These runs share no question ("
                            + "; ".join(f"{names[k]}: {len(q)}" for k, q in qsets.items())
                            + " questions), so there is nothing to compare on.")
    golds = {k: _golds(r, shared) for k, r in runs.items() if r.has("examples")}
    if golds:
        first, ref = next(iter(golds.items()))
        for k, g in golds.items():
            differ = sorted(q for q in shared if g.get(q) != ref.get(q))
            if differ:
                raise NotComparable(
                    f"{names[k]} and {names[first]} hold different relevant parts for "
                    f"{len(differ):,} of the {len(shared):,} questions they share (e.g. "
                    f"{differ[0]}), so their Score_IR measure different things: compare runs "
                    "whose gold parts are the same (same dataset file and evidence).")
    bsets = {k: set(int(b) for b in t["budget"].unique()) for k, t in tables.items()}
    budgets = sorted(set.intersection(*bsets.values()))
    if not budgets:
        raise NotComparable("These runs scored no token budget N in common ("
                            + "; ".join(f"{names[k]}: {budgets_text(sorted(b))}"
                                        for k, b in bsets.items()) + ").")
    notes = []
    if any(len(q) != len(shared) for q in qsets.values()):
        notes.append(f"Compared on the {len(shared):,} questions every run scored ("
                     + ", ".join(f"{names[k]} has {len(q):,}" for k, q in qsets.items()) + ").")
    if any(len(b) != len(budgets) for b in bsets.values()):
        notes.append(f"Compared on the budgets every run scored: {budgets_text(budgets)}.")
    no_hash = [names[k] for k, d in datasets.items() if not d.sha256]
    if no_hash:
        notes.append(f"{', '.join(no_hash)} recorded no dataset hash (an older or synthetic "
                     "run): matched by the dataset's path only.")
    configs = {k: run_spec(r) for k, r in runs.items()}
    for what, of in (("tokenizers", lambda c: c.tokenizer),
                     ("scoring settings",
                      lambda c: f"{c.scoring.method}, {c.scoring.mode}, "
                                f"share {c.scoring.relevance_share}")):
        if note := _settings_note(what, {names[k]: of(c) for k, c in configs.items()}):
            notes.append(note)

    parts, entries = [], []
    keep = sorted(shared)
    for k, t in tables.items():
        t = t[t["qid"].isin(shared) & t["budget"].isin(budgets)]
        for r in frames.order_systems(t["retriever"].unique(), configs[k].compared):
            entries.append({"entry": entry_id(k, r), "run": k, "retriever": r})
        cols = [c for c in ("qid", "retriever", "budget", "score", "context_tokens")
                if c in t.columns]
        parts.append(t[cols].assign(retriever=k + SEP + t["retriever"].astype(str)))
    scores = pd.concat(parts, ignore_index=True)
    examples = next((r.read("examples") for r in runs.values() if r.has("examples")), None)
    comp = Comparison(dict(runs), names, tuple(keep), tuple(budgets), scores,
                      pd.DataFrame(entries, columns=["entry", "run", "retriever"]), examples,
                      tuple(notes))
    comp.entries["name"] = comp.entries["entry"].map(comp.name)
    return comp


def group_by_dataset(runs: Mapping[str, Run]) -> dict[str, dict[str, Run]]:
    """{dataset key: {run key: Run}}, in the order the datasets first appear."""
    out: dict[str, dict[str, Run]] = {}
    for k, r in runs.items():
        out.setdefault(dataset_of(r).key, {})[k] = r
    return out


# --- the leaderboard ----------------------------------------------------------------------------


def bands(comp: Comparison, level: float = 0.95) -> pd.DataFrame:
    """Mean Score_IR per (entry, budget) with its band over the shared questions
    (`curves.mean_curves`; the `retriever` column holds entry ids)."""
    return curves.mean_curves(comp.scores, level)


def _judged(run: Run, qids: set[str]) -> pd.DataFrame:
    """Per system: share judged 5 on `qids` (valid judgments only) and how many."""
    j = frames.primary(run.table("judgments"), run_spec(run).generation.budget)
    if j is None or j.empty:
        return pd.DataFrame(columns=["retriever", "judged_correct", "judged_n"])
    j = j[j["qid"].astype(str).isin(qids)].dropna(subset=["score"])
    g = j.groupby("system")["score"]
    return pd.DataFrame({"retriever": g.size().index.astype(str),
                         "judged_correct": (g.apply(lambda s: float((s == 5).mean()))).values,
                         "judged_n": g.size().values})


def _estimated(run: Run, ir: pd.DataFrame) -> pd.DataFrame:
    """Per retriever: the share the run's own h/k rule estimates as correct (§3.3)."""
    from ragdash.calibration import estimate

    cal = run.calibration()
    if cal is None:
        return pd.DataFrame(columns=["retriever", "est_correct"])
    budget = int(cal.budget or max(ir["budget"]))
    if budget not in set(ir["budget"]):
        return pd.DataFrame(columns=["retriever", "est_correct"])
    try:
        est = estimate(ir, cal.h, cal.k, budget)
    except ValueError:  # per-retriever thresholds that miss a retriever
        return pd.DataFrame(columns=["retriever", "est_correct"])
    return pd.DataFrame({"retriever": est["retriever"].astype(str),
                         "est_correct": est["est_5"] / 100.0})


def _cost(run: Run, qids: set[str]) -> pd.DataFrame:
    """Per system: generation tokens (in + out) and their cost in USD on `qids`."""
    from ragdash.llm.cost import actual_cost

    a = frames.primary(run.table("answers"), run_spec(run).generation.budget)
    cols = ["retriever", "llm_tokens", "cost_usd"]
    if a is None or a.empty:
        return pd.DataFrame(columns=cols)
    a = a[a["qid"].astype(str).isin(qids)]
    rows = []
    for system, g in a.groupby("system"):
        c = actual_cost(g)
        usd = None if c["usd"].isna().any() else float(c["usd"].sum())
        rows.append((str(system), int(c["tokens_in"].sum() + c["tokens_out"].sum()), usd))
    return pd.DataFrame(rows, columns=cols)


def _metrics(run: Run) -> pd.DataFrame:
    m = run.table("ir_metrics")
    if m is None:
        return pd.DataFrame(columns=["retriever", *METRICS])
    return m.assign(retriever=m["retriever"].astype(str))[
        ["retriever", *[c for c in METRICS if c in m.columns]]]


def run_extras(comp: Comparison) -> pd.DataFrame:
    """Per entry, what does not depend on N: chunk-level metrics (over the run's own questions),
    share judged correct and estimated correct, generation tokens and cost (on the shared
    questions)."""
    qids = set(comp.qids)
    rows = []
    for k, run in comp.runs.items():
        ir = comp.scores[comp.scores["retriever"].str.startswith(k + SEP)]
        ir = ir.assign(retriever=ir["retriever"].str.slice(len(k + SEP)))
        per = _metrics(run)
        for extra in (_judged(run, qids), _estimated(run, ir), _cost(run, qids)):
            per = per.merge(extra, on="retriever", how="outer")
        rows.append(per.assign(entry=k + SEP + per["retriever"].astype(str)))
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["entry"])
    return out.drop(columns=["retriever"], errors="ignore")


BOARD_COLUMNS = ["rank", "entry", "name", "run", "retriever", "score", "lo", "hi", "gap", "auc",
                 "context_tokens", *METRICS, "judged_correct", "judged_n", "est_correct",
                 "llm_tokens", "cost_usd", "n"]


def leaderboard(comp: Comparison, budget: int, bands_: pd.DataFrame | None = None,
                level: float = 0.95) -> pd.DataFrame:
    """One row per (run, retriever), best first: rank; mean Score_IR at `budget` (score) with
    its interval (lo, hi) over the shared questions; gap to the leader; the
    normalised area under the Score_IR curve over the common budgets (auc); the mean number of
    context tokens at N; chunk-level metrics; shares judged and estimated correct (fractions);
    generation tokens and cost; n questions. Ties in score keep the same rank, broken for the
    order by auc."""
    if budget not in comp.budgets:
        raise ValueError(f"N = {budget} is not a budget every run scored "
                         f"({budgets_text(comp.budgets)})")
    b = bands(comp, level) if bands_ is None else bands_
    at = b[b["budget"] == budget].set_index("retriever")
    auc = {e: curve_area(g["budget"], g["mean"]) for e, g in b.groupby("retriever")}
    sc = comp.scores[comp.scores["budget"] == budget]
    tokens = (np.minimum(sc["context_tokens"], budget).groupby(sc["retriever"]).mean()
              if "context_tokens" in sc.columns else pd.Series(dtype=float))
    board = comp.entries.assign(
        score=comp.entries["entry"].map(at["mean"]), lo=comp.entries["entry"].map(at["lo"]),
        hi=comp.entries["entry"].map(at["hi"]), n=comp.entries["entry"].map(at["n"]),
        auc=comp.entries["entry"].map(auc),
        context_tokens=comp.entries["entry"].map(tokens))
    board = board.merge(run_extras(comp), on="entry", how="left")
    board = board.sort_values(["score", "auc"], ascending=False, kind="stable")
    board["rank"] = board["score"].round(9).rank(ascending=False, method="min").astype(int)
    board["gap"] = board["score"] - board["score"].max()
    for c in BOARD_COLUMNS:
        if c not in board.columns:
            board[c] = np.nan
    return board[BOARD_COLUMNS].reset_index(drop=True)


def best_per_run(board: pd.DataFrame, comp: Comparison) -> pd.DataFrame:
    """Each run's best (run, retriever) in leaderboard order: run, name (the run's), retriever,
    score, gap (to the leader): which configuration wins when each keeps its best retriever."""
    best = board.drop_duplicates("run")[["run", "retriever", "score", "gap"]]
    return best.assign(name=best["run"].map(comp.names)).reset_index(drop=True)


def versus_leader(comp: Comparison, board: pd.DataFrame, budget: int, level: float = 0.95
                  ) -> pd.DataFrame:
    """The leader against every other entry at `budget`, paired over the shared questions:
    `compare.pairwise_columns` (win/tie/loss, mean difference with its interval, Wilcoxon p,
    Holm-adjusted over the pairs)."""
    order = board["entry"].tolist()
    return compare.pairwise_columns(comp.matrix(budget), [(order[0], e) for e in order[1:]],
                                    level=level)


def verdict(comp: Comparison, board: pd.DataFrame, budget: int, level: float = 0.95) -> dict:
    """Who leads at `budget` and by how much over the runner-up, paired over the shared
    questions: {leader, runner_up, score, runner_score, pair (`compare.paired`), significant,
    headline, detail, text}. A lead is significant when the Wilcoxon p < 0.05 and the interval
    of the mean difference lies above 0."""
    first = board.iloc[0]
    out = {"leader": first["entry"], "runner_up": None, "score": float(first["score"]),
           "runner_score": None, "pair": None, "significant": False}
    if len(board) < 2:
        out["headline"] = (f"{first['name']}: mean Score_IR {first['score']:.3f} at "
                           f"N = {budget}.")
        out["detail"] = f"Only one (run, retriever) pair to rank, on {int(first['n'])} questions."
        out["text"] = f"{out['headline']} {out['detail']}"
        return out
    second = board.iloc[1]
    m = comp.matrix(budget)
    p = compare.paired(m[first["entry"]], m[second["entry"]], level=level)
    pv = p["pvalue"]
    significant = bool(pv is not None and pv < 0.05 and p["lo"] > 0)
    out.update(runner_up=second["entry"], runner_score=float(second["score"]), pair=p,
               significant=significant)
    if abs(p["mean_diff"]) < 1e-12:
        out["headline"] = (f"{first['name']} and {second['name']} tie at N = {budget}: mean "
                           f"Score_IR {first['score']:.3f}.")
    else:
        out["headline"] = (f"{first['name']} leads at N = {budget}: mean Score_IR "
                           f"{first['score']:.3f}, {p['mean_diff']:+.3f} over {second['name']} "
                           f"({second['score']:.3f}).")
    out["detail"] = sentences.lead_detail(p, significant, level)
    out["text"] = f"{out['headline']} {out['detail']}"
    return out


def format_board(comp: Comparison, board: pd.DataFrame, budget: int,
                 columns: Iterable[str] = ("score", "lo", "hi", "gap", "auc", *METRICS,
                                           "judged_correct")) -> str:
    """The leaderboard as plain text (the CLI's), with its caption."""
    cols = [c for c in columns if c in board.columns and board[c].notna().any()]
    view = board.set_index("rank")[["name", *cols]].rename(columns={
        "name": "run · retriever", "score": f"Score_IR@{budget}", "lo": "CI lo", "hi": "CI hi",
        "gap": "vs leader", "auc": "AUC", "judged_correct": "judged 5"})
    head = (f"Leaderboard at N = {budget}: mean Score_IR over {len(comp.qids):,} shared "
            f"questions, 95% CI; AUC: mean height of the curve over N = "
            f"{budgets_text(comp.budgets)}")
    return "\n".join([head, view.to_string(float_format=lambda v: f"{v:.3f}"),
                      *(f"note: {n}" for n in comp.notes)])
