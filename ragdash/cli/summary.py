"""The summary `ragdash run` (and each stage command) prints once its stages are done."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragdash.rundir import Run


def print_summary(run: Run) -> None:
    """What a run found: Score_IR per budget, IR metrics, judge scores and audit, reference
    metrics, thresholds h and k with their evidence, labels and input issues."""
    summary = run.table("ir_summary")
    if summary is not None:
        print("\nMean Score_IR per token budget N (rows) and retriever (columns):")
        print(summary.set_index("budget").to_string(float_format=lambda v: f"{v:.3f}"))
    metrics = run.table("ir_metrics")
    if metrics is not None:
        print("\nChunk-level IR metrics (a chunk is relevant when it holds a relevant part):")
        print(metrics.set_index("retriever").to_string(float_format=lambda v: f"{v:.3f}"))
    j = run.table("judgments")
    if j is not None:
        import pandas as pd

        dist = pd.crosstab(j["system"], j["score"].astype("Int64"), normalize="index")
        errors = j.groupby("system")["score"].apply(lambda s: int(s.isna().sum()))
        print("\nJudge scores per system (share of judged answers; errors kept apart):")
        print(dist.assign(errors=errors).to_string(float_format=lambda v: f"{v:.2f}"))
        audit = run.manifest.get("judge_audit", {})
        for check in audit.get("checks", []):
            if check["status"] == "warn":
                print(f"warning: judge audit, {check['title'].lower()}: {check['finding']}")
        if audit and not audit.get("warnings"):
            print("Judge audit: no warning (spread, consistency, position, true-answer match)")
    print_reference(run)
    c = run.calibration()
    if c is not None:
        print(f"\nThresholds at N = {c.budget}: h = {c.h:.3f}, k = {c.k:.3f}"
              + (f"  ({c.message})" if c.h_ge_k else ""))
        for name, cls in (("k", "judged 5"), ("h", "judged 1")):
            f = c.fits["pooled"][name]
            majority = max(f.n_positive, f.n - f.n_positive) / f.n
            print(f"{name} agrees with the judge ({cls} or not) on {f.accuracy:.1%} of "
                  f"{f.n} answers, vs {majority:.1%} for always predicting the majority "
                  f"({(f.accuracy - majority) * 100:+.1f} pp)")
        from ragdash.view import RunView

        facts = RunView(run).facts()  # the Overview's and the report's facts, the same words
        ev = facts.evidence or {}
        if ev:
            print(f"Does retrieval predict answer quality here? {ev['verdict']}")
            print(ev.get("refusal_verdict", ""))
        if facts.judged5 is not None and c.shares:
            def pct(v) -> str:
                return v.text + (f" [{v.ci[0]:.1f}, {v.ci[1]:.1f}]" if v.ci else "")

            print(f"Judged 5 (RAG answers): {pct(facts.judged5)}; estimated: " + "; ".join(
                f"{e.name} " + (f"no estimate ({e.reason})" if e.share is None
                                else pct(e.share)) for e in facts.estimates))
        print(facts.estimator_verdict)
    from ragdash.cli.labels import print_trust

    print_trust(run)  # labels, the judge's agreement, the share correct with PPI intervals
    issues = run.manifest.get("issues", {})
    if issues.get("skipped") or issues.get("warnings"):
        print(f"\nInput issues: {issues.get('skipped', 0)} record(s) skipped, "
              f"{issues.get('warnings', 0)} warning(s); all listed in {run.file('issues')}")
    print(f"\nRun directory: {run.path}")


def print_reference(run: Run) -> None:
    """Mean reference metrics per system, when the run has answers."""
    from ragdash.view import RunView

    t = RunView(run).reference_summary()
    if t is None or t.empty:
        return
    t = t.set_index("system")
    print("\nAnswers against the gold answers (no LLM; the mean of each metric per system, "
          "contains: the share containing a gold answer):")
    print(t.to_string(float_format=lambda v: f"{v:.3f}"))

