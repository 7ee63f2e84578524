"""What the report, the CLI summary and the dashboard read from a run, computed in plain Python
(the dashboard's `ragdash.ui.state` only caches these)."""

from __future__ import annotations

import pandas as pd

from ragdash import judge_audit
from ragdash.analysis import compare, curves, frames, matching, reference
from ragdash.analysis.thresholds import ThresholdData, threshold_data
from ragdash.rundir import Run


class RunView:
    """Read-only questions about one run; every method reads the files it needs."""

    def __init__(self, run: Run | str):
        self.run = run if isinstance(run, Run) else Run(run)

    @property
    def order(self) -> list[str]:
        """The retrievers in the run's configured order."""
        return list(self.run.config.retrievers)

    @property
    def retrievers(self) -> list[str]:
        """The retrievers scored in this run, in display order."""
        ir = self.run.table("ir_scores")
        names = ir["retriever"].unique() if ir is not None else self.order
        return frames.order_systems(names, self.order)

    @property
    def generation_budget(self) -> int | None:
        return self.run.config.generation_budget

    def answers(self) -> pd.DataFrame | None:
        """answers.parquet, one row per (qid, system) (a budget sweep keeps the main budget)."""
        return frames.primary(self.run.table("answers"), self.generation_budget)

    def judgments(self) -> pd.DataFrame | None:
        """judgments.parquet, one row per (qid, system) (main budget, one judge model)."""
        return frames.primary(self.run.table("judgments"), self.generation_budget)

    def reference(self) -> pd.DataFrame | None:
        """Every answer against the gold answers (reference.parquet; computed from the answers
        when the run has none, or one older than its answers); None without answers."""
        answers = self.run.file("answers")
        if not answers.exists():
            return None
        saved = self.run.file("reference")
        if saved.exists() and saved.stat().st_mtime_ns >= answers.stat().st_mtime_ns:
            return self.run.read("reference")
        return reference.score_answers(self.run.read("answers"), self.run.read("examples"))

    def reference_summary(self) -> pd.DataFrame | None:
        """Mean EM, F1 and share containing a gold answer per system (main budget), with n."""
        ref = self.reference()
        return None if ref is None else reference.summary(ref, self.order,
                                                          self.generation_budget)

    def summary(self) -> pd.DataFrame:
        """Mean Score_IR per budget x retriever (the paper's Table 3.1), in display order."""
        return curves.summary_table(self.run.read("ir_scores"), self.order,
                                    self.run.config.scoring_mode)

    def bands(self, n_boot: int = 1000, method: str | None = None) -> pd.DataFrame:
        """Mean Score_IR per (retriever, budget) with bootstrap bands over questions, by one
        matching method (None: the run's scoring.method)."""
        return curves.bootstrap_curves(self.run.ir_scores(method), n_boot=n_boot)

    def difference(self, a: str, b: str) -> pd.DataFrame:
        return compare.difference_curve(self.run.read("ir_scores"), a, b)

    def thresholds(self, budget: int) -> ThresholdData:
        """The threshold panel's data at `budget` (the stored fit when made at that budget on
        these scores: one fitted on another matching method's scores is refitted)."""
        cal = self.run.calibration()
        if cal is not None and not cal.fits_on(self.run.score_method):
            cal = None
        return threshold_data(self.run.read("ir_scores"), self.judgments(), budget, self.order,
                              cal)

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

    def cross_validate(self, budget: int) -> tuple[pd.DataFrame, str]:
        """Cross-validate the h/k rule and the logistic estimator (held-out questions and
        retrievers), as the calibrate stage does."""
        from ragdash.calibration import cross_validate

        return cross_validate(self.run.read("ir_scores"), self.run.read("judgments"),
                              budget=budget)

    def question_chunks(self, qid: str) -> dict[str, pd.DataFrame]:
        """{retriever: its chunks for `qid` in rank order} ({} before retrieval)."""
        if not (self.run.has("retrieved") and self.run.has("chunks")):
            return {}
        return matching.question_chunks(self.run.read("retrieved"), self.run.read("chunks"),
                                        str(qid))

    def audit(self) -> list[judge_audit.Check]:
        """The judge audit of the run's main judgments (empty without judgments)."""
        judged = self.judgments()
        if judged is None:
            return []
        return judge_audit.audit(judged, self.answers(), self.run.table("examples"))
