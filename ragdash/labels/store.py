"""Human labels of a run's answers on disk, and the sample of answers to label.

labels.parquet holds one row per (answer, labeller): qid, system, label (one of `LABELS`),
score (5 / 3 / 1; NaN for "cannot tell", which is left out of every figure), labeller, time
(UTC, ISO 8601), comment and answer_sha (the labelled answer's text hash: a label whose answer
was generated again since is stale and left out). A labeller labelling an answer again replaces
their earlier label. Every change holds a file lock and rewrites the file atomically, so several
labellers (and the dashboard, one label at a time) can add labels at once.

label_sample.parquet holds the answers to label, drawn once by a rule fixed before labelling
(`ragdash.labels.sampling`: by default stratified by system and the judge's verdict; `uniform`;
or `stratified`, equal per system). A sample is a prefix of a seeded ordering of the answers, so
asking for more answers later extends it and keeps it a sample by the same rule. The file keeps
the whole order with each answer's stratum and inclusion probability as drawn
(`ragdash.labels.design`), so an extension never follows the judge's later verdicts.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ragdash.labels.design import extended, sample_rows
from ragdash.labels.sampling import DEFAULT_RULE, RULES
from ragdash.rundir import Run
from ragdash.rundir.run import now

LABELS: dict[str, int | None] = {"correct": 5, "partly correct": 3, "wrong": 1,
                                 "cannot tell": None}
"""The allowed labels and their score on the judge's scale ("cannot tell": excluded)."""
COLUMNS = ("qid", "system", "label", "score", "labeller", "time", "comment", "answer_sha")
SAMPLE_COLUMNS = ("qid", "system", "position", "rule", "seed", "drawn")
MAX_SEED = 2**63 - 1
"""The largest seed of a sample's draw (label_sample.parquet stores it as a 64-bit integer)."""
MAX_LABELLER, MAX_COMMENT = 100, 2000
"""The longest labeller name and comment, in characters."""
MAX_LABELS = 200_000
"""The most labels (rows of labels.parquet) a run keeps: more is refused on saving, and a file
holding more is not read (so evaluating labels stays bounded in memory)."""
MAX_LABELLERS = 50
"""The most distinct labellers (stand-ins included) a run's labels may name: agreement is
worked out for every pair of them."""
LOCK_TIMEOUT_S = 30
STAND_IN = "stand-in: "
"""How the labeller of labels derived from a reference metric (not a person) begins."""


@contextlib.contextmanager
def locked(run: Run) -> Iterator[None]:
    """Hold the run's label lock (a `.labels.lock` file beside the labels)."""
    from filelock import FileLock, Timeout

    run.path.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(run.path / ".labels.lock", timeout=LOCK_TIMEOUT_S):
            yield
    except Timeout:
        raise RuntimeError(f"{run.path}: another labeller has held the label lock for over "
                           f"{LOCK_TIMEOUT_S} s; try again") from None


def answer_sha(text: str) -> str:
    """A short hash of an answer's text (the label's link to the answer it judged)."""
    return hashlib.sha1(str(text).encode("utf-8")).hexdigest()[:12]


def labelable(run: Run) -> pd.DataFrame:
    """The answers that can be labelled: one per (qid, system) at the run's generation budget,
    with a text and no generation error; columns qid, system, answer, answer_sha, sorted by
    (qid, system)."""
    from ragdash.run_spec import answers

    a = answers(run)
    if a is None:
        raise FileNotFoundError(f"run {run.path} has no answers to label (run `ragdash "
                                "generate` first)")
    ok = a["answer"].notna() & (a["answer"].astype(str).str.strip() != "")
    if "error" in a.columns:
        ok &= a["error"].isna()
    a = a.loc[ok, ["qid", "system", "answer"]].astype({"qid": str, "system": str})
    a = a.drop_duplicates(["qid", "system"]).sort_values(["qid", "system"])
    return a.assign(answer_sha=[answer_sha(t) for t in a["answer"]]).reset_index(drop=True)


def _empty_labels() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=float if c == "score" else object)
                         for c in COLUMNS})


class LabelStoreTooLarge(ValueError):
    """labels.parquet holds more labels or labellers than `MAX_LABELS` / `MAX_LABELLERS`."""


def _too_large(run: Run, what: str) -> LabelStoreTooLarge:
    return LabelStoreTooLarge(
        f"{run.file('labels')}: {what}; nothing was read. Move the file aside and import the "
        "labels again within the limits")


def read_labels(run: Run) -> pd.DataFrame:
    """Every label of the run (no file: an empty table with the columns). LabelStoreTooLarge,
    before reading the rows, when the file holds over `MAX_LABELS` labels or names over
    `MAX_LABELLERS` labellers."""
    if not run.has("labels"):
        return _empty_labels()
    import pyarrow.parquet as pq

    n = pq.read_metadata(run.file("labels")).num_rows
    if n > MAX_LABELS:
        raise _too_large(run, f"it holds {n:,} labels, over the limit of {MAX_LABELS:,} a run "
                              "keeps")
    df = run.read("labels")
    if (k := df["labeller"].nunique()) > MAX_LABELLERS:
        raise _too_large(run, f"its labels name {k:,} labellers, over the limit of "
                              f"{MAX_LABELLERS} a run keeps")
    if "answer_sha" not in df.columns:
        df = df.assign(answer_sha=None)
    return df.astype({"qid": str, "system": str}).reset_index(drop=True)


def current_labels(run: Run, answers: pd.DataFrame | None = None
                   ) -> tuple[pd.DataFrame, int]:
    """The labels whose answer is still the one labelled, and how many are stale (answer
    generated again, or gone)."""
    labels = read_labels(run)
    if labels.empty:
        return labels, 0
    answers = labelable(run) if answers is None else answers
    key = labels[["qid", "system"]].merge(answers[["qid", "system", "answer_sha"]],
                                          on=["qid", "system"], how="left")["answer_sha"]
    same = key.notna().to_numpy() & (labels["answer_sha"].isna().to_numpy()
                                     | (labels["answer_sha"].to_numpy() == key.to_numpy()))
    return labels[same].reset_index(drop=True), int((~same).sum())


def _write_labels(run: Run, labels: pd.DataFrame) -> None:
    run.write("labels", labels[list(COLUMNS)].astype({"score": float}).reset_index(drop=True))


def check_label(label: object) -> str:
    """The label, trimmed and lower case, when allowed; ValueError saying what is allowed."""
    text = " ".join(label.split()).lower() if isinstance(label, str) else None
    if text not in LABELS:
        raise ValueError(f"label {label!r} is not one of {', '.join(repr(k) for k in LABELS)}")
    return text


def check_labeller(labeller: object) -> str:
    """The labeller's name, whitespace collapsed; ValueError when empty or too long."""
    name = " ".join(labeller.split()) if isinstance(labeller, str) else ""
    if not name:
        raise ValueError("no labeller: give the labeller's name")
    if len(name) > MAX_LABELLER:
        raise ValueError(f"the labeller's name is {len(name)} characters long, over the limit "
                         f"of {MAX_LABELLER}")
    return name


def check_comment(comment: object) -> str:
    """The comment, trimmed ("" for none); ValueError when too long."""
    text = "" if comment is None or (isinstance(comment, float) and np.isnan(comment)) \
        else str(comment).strip()
    if len(text) > MAX_COMMENT:
        raise ValueError(f"the comment is {len(text):,} characters long, over the limit of "
                         f"{MAX_COMMENT:,}")
    return text


def label_row(qid: str, system: str, label: str, labeller: str, comment: str, sha: str,
              time: str | None = None) -> dict:
    """One row of labels.parquet (values already checked)."""
    score = LABELS[label]
    return {"qid": qid, "system": system, "label": label,
            "score": float("nan") if score is None else float(score), "labeller": labeller,
            "time": time or now(), "comment": comment, "answer_sha": sha}


def _check_limits(run: Run, kept: pd.DataFrame, new: pd.DataFrame) -> None:
    """ValueError when the labels after a change would exceed `MAX_LABELS` or
    `MAX_LABELLERS` (the change is then refused whole)."""
    n = len(kept) + len(new)
    if n > MAX_LABELS:
        raise ValueError(f"{run.file('labels')}: {len(new):,} labels more would make {n:,}, "
                         f"over the limit of {MAX_LABELS:,} a run keeps; nothing was saved")
    names = set(kept["labeller"]) | set(new["labeller"])
    if len(names) > MAX_LABELLERS:
        raise ValueError(f"{run.file('labels')}: these labels would make {len(names):,} "
                         f"labellers, over the limit of {MAX_LABELLERS} a run keeps; nothing "
                         "was saved")


def save_labels(run: Run, rows: list[dict]) -> tuple[int, int]:
    """Add checked label rows under the lock, each replacing the same labeller's label of the
    same answer: (added, replaced). ValueError, saving nothing, when the run's labels would
    then exceed `MAX_LABELS` or `MAX_LABELLERS`."""
    if not rows:
        return 0, 0
    new = pd.DataFrame(rows, columns=list(COLUMNS))
    with locked(run):
        old = read_labels(run)
        key = ["qid", "system", "labeller"]
        hit = old[key].merge(new[key].drop_duplicates(), on=key, how="left", indicator=True)
        replaced = (hit["_merge"] == "both").to_numpy()
        kept = old[~replaced]
        _check_limits(run, kept, new)
        _write_labels(run, new if kept.empty else pd.concat([kept, new], ignore_index=True))
    return len(new) - int(replaced.sum()), int(replaced.sum())


def why_unknown(answers: pd.DataFrame, qid: str, system: str) -> tuple[str, str]:
    """(field, message): why (qid, system) is not among the labelable `answers`."""
    if qid not in set(answers["qid"]):
        return "qid", f"unknown qid {qid!r}: the run has no answer to that question"
    systems = sorted(set(answers["system"]))
    if system not in systems:
        return "system", f"unknown system {system!r} (the run's: {', '.join(systems)})"
    return "system", (f"qid {qid!r} has no answer by {system!r} to label (its generation "
                      "failed or was empty)")


def add_label(run: Run, qid: str, system: str, label: str, labeller: str,
              comment: str = "") -> dict:
    """Label one answer (replacing this labeller's earlier label of it); returns the row.
    ValueError (naming the answer and the field) on an unknown answer, a label not in
    `LABELS`, an empty labeller or an over-long comment."""
    qid, system = str(qid), str(system)
    where = f"{run.path}: label of qid {qid!r}, system {system!r}"
    try:
        label, labeller = check_label(label), check_labeller(labeller)
        comment = check_comment(comment)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    answers = labelable(run)
    hit = answers[(answers["qid"] == qid) & (answers["system"] == system)]
    if hit.empty:
        raise ValueError(f"{where}: {why_unknown(answers, qid, system)[1]}")
    row = label_row(qid, system, label, labeller, comment, hit["answer_sha"].iloc[0])
    save_labels(run, [row])
    return row


def undo_last(run: Run, labeller: str) -> dict | None:
    """Remove the labeller's most recent label (None when they have none); returns it."""
    with locked(run):
        labels = read_labels(run)
        mine = labels.index[labels["labeller"] == labeller]
        if mine.empty:
            return None
        last = labels.loc[mine].sort_values("time", kind="stable").index[-1]
        row = labels.loc[last].to_dict()
        _write_labels(run, labels.drop(index=last))
    return row


# --- the sample to label ----------------------------------------------------------------------

def _with_verdict(run: Run, population: pd.DataFrame) -> pd.DataFrame:
    """The population with judged5 (1: the judge gave 5; 0 otherwise; NaN without a judge), the
    strata of the `judge` and `neyman` rules, and `reference` ("contains a gold answer", NaN
    without reference metrics), the spread the `neyman` rule allocates by."""
    from ragdash.labels.judged import judge_scores
    from ragdash.run_spec import main_reference

    judge = judge_scores(run)
    if judge is None:
        population = population.assign(judged5=np.nan)
    else:
        got = population.merge(judge, on=["qid", "system"], how="left")["judge"]
        population = population.assign(judged5=np.where(got.isna(), np.nan,
                                                        (got == 5).astype(float)))
    ref = main_reference(run)
    if ref is None or "contains" not in ref:
        return population.assign(reference=np.nan)
    ref = ref.astype({"qid": str, "system": str}).drop_duplicates(["qid", "system"])
    got = population.merge(ref[["qid", "system", "contains"]], on=["qid", "system"], how="left")
    return population.assign(reference=got["contains"].astype(float).to_numpy())


def read_sample(run: Run) -> pd.DataFrame | None:
    """The stored sample (qid, system, position, rule, seed, drawn; with its design, also
    stratum and inclusion: `ragdash.labels.design`), or None."""
    if not run.has("label_sample"):
        return None
    return sample_rows(run.read("label_sample").astype({"qid": str, "system": str}))


def draw_sample(run: Run, n: int, rule: str = DEFAULT_RULE, seed: int = 0) -> pd.DataFrame:
    """The sample of `n` answers to label (at most every answer), drawn once and stored.

    With a sample stored by the same rule and seed, it is kept (and extended when `n` is
    larger, with the next answers of the same seeded order). Another rule or seed replaces it
    only while none of its answers is labelled: ValueError otherwise."""
    if rule not in RULES:
        raise ValueError(f"sample rule {rule!r} is not one of {', '.join(RULES)}")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"the sample size must be a positive whole number, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) \
            or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"the seed must be a whole number from 0 to {MAX_SEED:,}, got {seed!r}")
    population = _with_verdict(run, labelable(run)[["qid", "system"]])
    with locked(run):
        old = read_sample(run)
        if old is not None and (old["rule"].iloc[0], int(old["seed"].iloc[0])) != (rule, seed):
            labelled = old.merge(read_labels(run)[["qid", "system"]].drop_duplicates(),
                                 on=["qid", "system"])
            if not labelled.empty:
                raise ValueError(
                    f"{run.file('label_sample')}: the sample was drawn by rule "
                    f"{old['rule'].iloc[0]!r} with seed {int(old['seed'].iloc[0])} and "
                    f"{len(labelled)} of its answers are labelled; another rule or seed would "
                    "make the labels no longer a random sample: keep its rule and seed, or "
                    "start over by deleting the labels and the sample files")
            old = None
        if old is not None and len(old) >= n:
            return old
        stored = None if old is None else run.read("label_sample").astype({"qid": str,
                                                                            "system": str})
        design = extended(stored, population, rule, seed, n, now())  # order, strata kept
        run.write("label_sample", design)
    return sample_rows(design)


@dataclass(frozen=True)
class Item:
    """One answer to label, as a labeller sees it (never the judge's score)."""

    position: int
    qid: str
    system: str
    question: str
    gold_answers: tuple[str, ...]
    answer: str


def sample_items(run: Run) -> list[Item]:
    """The stored sample's answers in order, with question, gold answers and answer (an answer
    generated again since the draw shows its new text; one gone is left out)."""
    from ragdash.analysis.reference import gold_answers

    sample = read_sample(run)
    if sample is None:
        return []
    examples = run.read("examples").astype({"qid": str})
    questions = dict(zip(examples["qid"], examples["question"], strict=True))
    golds = gold_answers(examples)
    answers = labelable(run).set_index(["qid", "system"])["answer"]
    return [Item(int(p), q, s, str(questions.get(q, "")), tuple(golds.get(q, ())),
                 str(answers[(q, s)]))
            for p, q, s in zip(sample["position"], sample["qid"], sample["system"], strict=True)
            if (q, s) in answers.index]


def next_to_label(run: Run, labeller: str, skip_labelled_by_others: bool = False
                  ) -> Item | None:
    """The first answer of the sample this labeller has not labelled ("cannot tell" counts as
    labelled); with `skip_labelled_by_others`, the first one nobody has. None when done (or
    no sample)."""
    labels = read_labels(run)
    done = labels if skip_labelled_by_others else labels[labels["labeller"] == labeller]
    seen = set(zip(done["qid"], done["system"], strict=True))
    return next((it for it in sample_items(run) if (it.qid, it.system) not in seen), None)


def progress(run: Run, labeller: str | None = None) -> dict:
    """{"sample": answers in the sample, "labelled": those labelled (by `labeller`, or by
    anyone), "by_labeller": {name: answers of the sample they labelled}}."""
    sample = read_sample(run)
    if sample is None:
        return {"sample": 0, "labelled": 0, "by_labeller": {}}
    hits = read_labels(run).merge(sample[["qid", "system"]], on=["qid", "system"])
    mine = hits if labeller is None else hits[hits["labeller"] == labeller]
    return {"sample": len(sample),
            "labelled": int(mine[["qid", "system"]].drop_duplicates().shape[0]),
            "by_labeller": {str(k): int(v) for k, v in hits.groupby("labeller").size().items()}}
