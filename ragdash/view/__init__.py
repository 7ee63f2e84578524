"""What the report, the CLI summary and the dashboard read from a run, computed in plain Python.

A view reads the run's files through a pluggable `Reader` and may keep its answers in a `Memo`
(`ragdash.rundir.reader`): the dashboard gives it a cached reader and its memo, so each answer
is kept exactly as long as every file it read is unchanged, with no list of files to keep."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import pandas as pd

from ragdash import run_spec as saved
from ragdash.analysis import (
    area,
    compare,
    curves,
    frames,
    judge_audit,
    matching,
    reference,
    signals,
    system_means,
    truthfulness,
)
from ragdash.analysis.threshold_panel import ThresholdData, threshold_data
from ragdash.config import RunSpec
from ragdash.erag.summary import ERAGSummary, erag_cost, erag_summary
from ragdash.rundir import Memo, Reader, Run
from ragdash.view import leaderboard

F = TypeVar("F", bound=Callable)


def kept(about: str | None = None) -> Callable[[F], F]:
    """A view's method whose answer the view's memo keeps (without a memo: computed on every
    call) until a file it read changes; `about` says what it does meanwhile (a spinner)."""
    def wrap(method: F) -> F:
        signature = inspect.signature(method)

        @functools.wraps(method)
        def inner(self: RunView | RunsView, *args, **kwargs):
            if self.memo is None:
                return method(self, *args, **kwargs)
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            key = (type(self).__name__, self.identity, method.__name__,
                   tuple(bound.arguments.values())[1:])
            return self.memo.get(key, lambda reader: method(self.rebind(reader), *args,
                                                            **kwargs), about)
        return inner  # type: ignore[return-value]
    return wrap


class RunView:
    """Read-only questions about one run; every method reads the files it needs through the
    run's reader (`reader` replaces it), its answer kept in `memo` when one is given."""

    def __init__(self, run: Run | str | Path, reader: Reader | None = None,
                 memo: Memo | None = None):
        run = run if isinstance(run, Run) else Run(run)
        self.run = run if reader is None else Run(run.path, reader)
        self.memo = memo

    @property
    def identity(self) -> str:
        return str(self.run.path)

    def rebind(self, reader: Reader) -> RunView:
        """The same view reading through `reader`."""
        return RunView(self.run.path, reader, self.memo)

    @property
    def spec(self) -> RunSpec:
        """The specification the run was made with (`run_spec.run_spec`)."""
        return saved.run_spec(self.run)

    @property
    def order(self) -> list[str]:
        """The retrievers in the run's configured order."""
        return self.spec.compared

    @property
    def retrievers(self) -> list[str]:
        """The retrievers scored in this run, in display order."""
        ir = self.run.table("ir_scores")
        names = ir["retriever"].unique() if ir is not None else self.order
        return frames.order_systems(names, self.order)

    @property
    def budgets(self) -> list[int]:
        """The budgets N scored (`run_spec.budgets`)."""
        return saved.budgets(self.run)

    @property
    def generation_budget(self) -> int:
        return self.spec.generation.budget

    @property
    def llm_backends(self) -> dict[str, str | None]:
        """The backend each LLM stage ran on ({"generation", "judging"}): the stage's own `llm`
        section's, else the run's `llm` (what the Build page priced)."""
        spec = self.spec
        return {stage: (section.llm or spec.llm).backend
                for stage, section in (("generation", spec.generation), ("judging", spec.judge))}

    @kept()
    def score_methods(self) -> list[str]:
        """The Score_IR matching methods scored: scoring.method first, then scoring.also's."""
        return saved.score_methods(self.run)

    @kept()
    def ir_scores(self, method: str | None = None) -> pd.DataFrame:
        """Score_IR by one matching method (None: the run's scoring.method)."""
        return saved.ir_scores(self.run, method)

    def answers(self) -> pd.DataFrame | None:
        """answers.parquet, one row per (qid, system) (`run_spec.answers`)."""
        return saved.answers(self.run)

    def judgments(self) -> pd.DataFrame | None:
        """judgments.parquet, one row per (qid, system) (`run_spec.judgments`)."""
        return saved.judgments(self.run)

    def reference(self) -> pd.DataFrame | None:
        """Every answer against the gold answers (`run_spec.reference`); None
        without answers."""
        return saved.reference(self.run)

    @kept("Scoring truthfulness per system…")
    def truthfulness(self) -> tuple[pd.DataFrame, pd.DataFrame, str] | None:
        """CRAG's truthfulness score per system (`analysis.truthfulness`): the table, the class
        of every answer and where the classes came from; None without answers."""
        from ragdash.constants import REFERENCE_METRICS
        from ragdash.llm.refusal import RefusalRule

        answers = self.answers()
        if answers is None or answers.empty:
            return None
        rule = RefusalRule.from_config(self.spec.judge.refusal)
        refused = answers["answer"].map(lambda a: rule.match(a) is not None)
        classes = truthfulness.classify(
            answers, refused=refused, labels=self.run.table("labels"),
            judgments=self.judgments(),
            reference=frames.primary(self.reference(), self.generation_budget),
            correct_at=REFERENCE_METRICS["contains"].correct_at)
        order = frames.order_systems(classes["system"].unique(), self.order)
        return (truthfulness.scores(classes, order), classes,
                truthfulness.sources_text(classes))

    def answer_signals(self, budget: int | None = None
                       ) -> tuple[pd.DataFrame, str, list[str], float] | None:
        """`signals.answer_signals` of the run's main answers with Score_IR at `budget` (None:
        the generation budget); None without answers scored against the gold answers."""
        ref = frames.primary(self.reference(), self.generation_budget)
        if ref is None or ref.empty:
            return None
        budget = self.generation_budget if budget is None else budget
        ir = self.ir_scores()
        at = frames.at_budget(ir, budget) if budget in set(ir["budget"]) else None
        erag = self.erag()
        return signals.answer_signals(
            ref, ir=at, judgments=self.judgments(),
            metrics=frames.primary(self.run.table("metrics"), self.generation_budget),
            erag=None if erag is None else erag.per_answer, labels=self.run.table("labels"))

    def signal_costs(self, names: list[str]) -> dict[str, tuple[float, float]]:
        """(LLM calls, tokens) each of the signals `names` cost (`signals.signal_costs`)."""
        return signals.signal_costs(
            names, judgments=self.judgments(),
            metrics=frames.primary(self.run.table("metrics"), self.generation_budget),
            erag=self.erag_cost())

    def erag(self) -> ERAGSummary | None:
        """eRAG's per-retriever means and per-answer measures (`ragdash.erag.summary`); None
        before `ragdash erag` has run."""
        table = self.run.table("erag")
        return None if table is None or table.empty else erag_summary(table, self.order)

    def erag_cost(self) -> tuple[float, float] | None:
        """The LLM calls and tokens eRAG's labels cost; None before it has run."""
        labels = self.run.table("erag_labels")
        return None if labels is None or labels.empty else erag_cost(labels)

    @kept("Gathering the run's facts…")
    def facts(self, name: Callable[[str], str] = str):
        """The run's facts (`ragdash.view.facts.RunFacts`): each quantity the pages, the report
        and the CLI state, computed once per state of the files it read."""
        from ragdash.view.facts import facts

        return facts(self, name)

    @kept("Weighing the labels…")
    def label_findings(self) -> dict | None:
        """What people's labels say: the labels, agreement, ppi and share sections
        (`ragdash.labels.current`); None without answers."""
        from ragdash import labels

        return labels.current(self.run) if self.run.has("answers") else None

    @kept()
    def signal_agreement(self, n_boot: int = 500) -> tuple[pd.DataFrame, str] | None:
        """Which signal agrees with the truth (`analysis.signals`): one row per signal, best
        first, with the LLM calls and tokens each cost, and the truth's name; None without
        answers scored against the gold answers."""
        got = self.answer_signals()
        if got is None:
            return None
        frame, truth, names, correct_at = got
        cost = self.signal_costs(names)
        return signals.signal_agreement(frame, names, "truth", correct_at=correct_at,
                                        n_boot=n_boot, cost=cost), truth

    def system_signals(self, budget: int) -> tuple[pd.DataFrame, list[str], str, str]:
        """Every system's signals per question (`answer_signals`, Score_IR at `budget`; a
        retriever without answers keeps its Score_IR rows) with CRAG's truthfulness value of
        each answer (`truthfulness`), the signal columns, the reference (the truth column where
        the run has answers, else Score_IR) and its name."""
        ir = self.ir_scores()
        at = frames.at_budget(ir, budget)
        at = at.assign(qid=at["qid"].astype(str)).rename(
            columns={"retriever": "system", "score": "score_ir"})[["qid", "system", "score_ir"]]
        got = self.answer_signals(budget)
        if got is None:
            return at, ["score_ir"], "score_ir", "Score_IR"
        frame, truth, names, _ = got
        if (crag := self.truthfulness()) is not None:  # an outcome beside the signals
            values = crag[1][["qid", "system", "truthfulness"]]
            frame = frame.merge(values, on=["qid", "system"], how="left")
            names = [*names, "truthfulness"]
        extra = at[~at["system"].isin(set(frame["system"]))]
        frame = pd.concat([frame, extra], ignore_index=True) if len(extra) else frame
        metric = truth.removeprefix("reference metric: ")
        if metric == truth:  # human labels
            return frame, ["truth", *names], "truth", truth
        return (frame.assign(**{metric: frame["truth"]}), [metric, *names], metric,
                f"the truth ({signals.signal_label(metric)})")

    @kept("Bootstrapping every signal per system…")
    def signal_board(self, budget: int, systems: tuple[str, ...] | None = None,
                     n_boot: int = 1000) -> system_means.SignalBoard:
        """Every signal's mean with its 95 % CI per system and the rank agreement with the
        truth (`analysis.system_means`); `systems`: which, in order (default: every one)."""
        frame, names, reference, called = self.system_signals(budget)
        order = frames.order_systems(frame["system"].unique(), self.order)
        keep = [s for s in order if systems is None or s in systems]
        return system_means.signal_board(frame, names, reference, keep, reference_name=called,
                                         n_boot=n_boot)

    @kept()
    def reference_summary(self) -> pd.DataFrame | None:
        """Mean EM, F1 and share containing a gold answer per system (main budget), with n."""
        ref = self.reference()
        return None if ref is None else reference.summary(ref, self.order,
                                                          self.generation_budget)

    @kept()
    def summary(self) -> pd.DataFrame:
        """Mean Score_IR per budget x retriever (the paper's Table 3.1), in display order."""
        return curves.summary_table(self.run.read("ir_scores"), self.order,
                                    self.spec.scoring.mode)

    @kept("Computing confidence bands…")
    def bands(self, method: str | None = None) -> pd.DataFrame:
        """Mean Score_IR per (retriever, budget) with its band over questions, by one matching
        method (None: the run's scoring.method)."""
        return curves.mean_curves(saved.ir_scores(self.run, method))

    @kept("Comparing the areas under the curves…")
    def headline(self) -> area.Headline:
        """The budget-free headline: areas under the Score_IR curves, the leader's lead and the
        budgets where it is significant (`ragdash.analysis.area`)."""
        return area.headline(self.run.read("ir_scores"), self.order)

    @kept()
    def difference(self, a: str, b: str) -> pd.DataFrame:
        return compare.difference_curve(self.run.read("ir_scores"), a, b)

    @kept("Preparing the threshold panel…")
    def thresholds(self, budget: int) -> ThresholdData:
        """The threshold panel's data at `budget` (the stored fit when made at that budget on
        these scores: one fitted on another matching method's scores is refitted)."""
        cal = self.run.calibration()
        if cal is not None and not cal.fits_on(self.spec.scoring.method):
            cal = None
        return threshold_data(self.run.read("ir_scores"), self.judgments(), budget, self.order,
                              cal)

    @kept("Measuring how well retrieval predicts the judge…")
    def predictiveness(self, budget: int) -> dict | None:
        """How well Score_IR at `budget` predicts the judge (None without judgments): the same
        pairs, bootstrap and seed as the calibrate stage."""
        from ragdash.calibration.predictive import predictiveness

        data = self.thresholds(budget)
        return predictiveness(data.pairs) if data.has_judgments else None

    def estimator_verdict(self) -> str:
        """The calibrate stage's verdict on the estimators, if any."""
        cal = self.run.calibration()
        return "" if cal is None else cal.estimator_verdict

    @kept("Cross-validating the estimators…")
    def cross_validate(self, budget: int) -> tuple[pd.DataFrame, str]:
        """Cross-validate the h/k rule and the logistic estimator (held-out questions and
        retrievers), as the calibrate stage does."""
        from ragdash.calibration import cross_validate

        return cross_validate(self.run.read("ir_scores"), self.run.read("judgments"),
                              budget=budget)

    @kept()
    def partial(self) -> dict[str, tuple[int, int]]:
        """{imported system: (questions it has, questions of the run)} for each system whose
        file lacks some of the run's questions (`ragdash.systems.store.partial`)."""
        from ragdash.systems.store import partial

        return partial(self.run)

    def coverage_note(self, names: list[str] | None = None,
                      name: Callable[[str], str] = str) -> str:
        """One plain sentence on the systems among `names` (None: all) scored on part of the
        questions; "" when none is."""
        from ragdash.systems.store import coverage_note

        counts = {s: c for s, c in self.partial().items() if names is None or s in names}
        return coverage_note(counts, name)

    @kept()
    def question_chunks(self, qid: str) -> dict[str, pd.DataFrame]:
        """{retriever: its chunks for `qid` in rank order} ({} before retrieval)."""
        if not (self.run.has("retrieved") and self.run.has("chunks")):
            return {}
        from ragdash.systems.store import chunk_table

        return matching.question_chunks(self.run.read("retrieved"), chunk_table(self.run),
                                        str(qid))

    @kept()
    def audit(self) -> list[judge_audit.Check]:
        """The judge audit of the run's main judgments (empty without judgments)."""
        judged = self.judgments()
        if judged is None:
            return []
        return judge_audit.audit(judged, self.answers(), self.run.table("examples"))


class RunsView:
    """Read-only questions about several runs ({key: Run}, the Runs page's): their catalogue
    and their comparison on the questions and budgets they share (`view.leaderboard`)."""

    def __init__(self, runs: Mapping[str, Run], reader: Reader | None = None,
                 memo: Memo | None = None):
        self.runs = {k: r if reader is None else Run(r.path, reader) for k, r in runs.items()}
        self.memo = memo

    @property
    def identity(self) -> tuple:
        return tuple((k, str(r.path)) for k, r in self.runs.items())

    def rebind(self, reader: Reader) -> RunsView:
        return RunsView(self.runs, reader, self.memo)

    @kept()
    def catalogue(self) -> pd.DataFrame:
        """One row per run: dataset, chunker, retrievers, budgets, stages, size."""
        return leaderboard.catalogue(self.runs)

    @kept("Reading the runs' scores…")
    def comparison(self) -> leaderboard.Comparison:
        """The runs on their shared questions and budgets; NotComparable says why not."""
        return leaderboard.compare_runs(self.runs)

    @kept("Computing confidence bands…")
    def bands(self) -> pd.DataFrame:
        """Mean Score_IR per (entry, budget) with its band."""
        return leaderboard.bands(self.comparison())

    @kept("Comparing the areas under the curves…")
    def headline(self) -> area.Headline:
        """The budget-free headline over every (run, retriever) entry (`analysis.area`)."""
        comp = self.comparison()
        return area.headline(comp.scores, list(comp.entries["entry"]))

    @kept("Ranking…")
    def board(self, budget: int) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
        """(leaderboard, verdict, the leader against every other entry) at `budget`."""
        comp = self.comparison()
        board = leaderboard.leaderboard(comp, budget, self.bands())
        return (board, leaderboard.verdict(comp, board, budget),
                leaderboard.versus_leader(comp, board, budget))

    @kept("Bootstrapping every signal per (run, system)…")
    def signal_board(self, budget: int, n_boot: int = 1000) -> system_means.SignalBoard:
        """Every signal's mean with its 95 % CI per (run, system) on the shared questions, Score_IR
        at `budget`, and the rank agreement with the truth (`analysis.system_means`). A system
        is named by its entry id (`run key::system`, the LLM-only answers included); a run
        without a signal (no judge, no metrics stage) has no value there, never 0. The reference
        is the runs' truth when every run has the same kind, else Score_IR."""
        comp = self.comparison()
        qids = set(comp.qids)
        parts, names, refs, order = [], [], set(), []
        for k, run in comp.runs.items():
            frame, cols, reference, called = RunView(run).system_signals(budget)
            frame = frame[frame["qid"].astype(str).isin(qids)]
            systems = frames.order_systems(frame["system"].unique(), saved.run_spec(run).compared)
            order += [leaderboard.entry_id(k, s) for s in systems]
            parts.append(frame.assign(system=k + leaderboard.SEP + frame["system"].astype(str)))
            names += [c for c in cols if c not in names]
            refs.add((reference, called))
        reference, called = refs.pop() if len(refs) == 1 else ("score_ir", "Score_IR")
        return system_means.signal_board(pd.concat(parts, ignore_index=True), names, reference,
                                         order, reference_name=called, name=comp.name,
                                         n_boot=n_boot)

    @kept()
    def pair(self, a: str, b: str, budget: int) -> tuple[dict, pd.DataFrame]:
        """Entries `a` vs `b`: `compare.paired` at `budget` and the difference across budgets."""
        comp = self.comparison()
        m = comp.matrix(budget)
        return compare.paired(m[a], m[b]), compare.difference_curve(comp.scores, a, b)
