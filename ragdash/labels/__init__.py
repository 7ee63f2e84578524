"""Human labels of a run's answers, and what they say about the judge and the share correct.

Labelling (labels.parquet, label_sample.parquet; safe with several labellers at once):
- `draw_sample(run, n, rule="judge", seed=0)`: the answers to label, drawn once and stored
  (`rule`: "judge", by system × the judge's verdict; "uniform"; or "stratified", equal per
  system: `ragdash.labels.sampling`); a larger n extends it in the same order.
- `next_to_label(run, labeller)` -> `Item` (position, qid, system, question, gold_answers,
  answer; never the judge's score) or None when the labeller is done; `sample_items(run)`.
- `add_label(run, qid, system, label, labeller, comment="")` with `label` one of `LABELS`
  (correct, partly correct, wrong, cannot tell); `undo_last(run, labeller)`.
- `progress(run, labeller=None)` -> {"sample", "labelled", "by_labeller"}.
- `read_labels(run)`; `current_labels(run)` -> (labels of unchanged answers, stale count).

Files and stand-ins:
- `export_csv(run, path, n=None, rule=None, seed=None)` (formulas neutralised in every cell),
  `import_csv(run, path, labeller=None)` (LabelFileError lists every problem by file, row and
  field; nothing is imported then; files are bounded in bytes, rows and labellers before any
  row is checked, and a run keeps at most `store.MAX_LABELS` labels from `MAX_LABELLERS`);
- `from_reference(run, metric="contains")`: stand-in labels from a reference metric, whose
  labeller says so ("stand-in: contains a gold answer").

What they say (`ragdash.calibration.agreement`, `ragdash.calibration.ppi`):
- `evaluate(run)` -> {"labels", "agreement", "ppi"}; `refresh(run)` stores them in
  calibration.json; `current(run)` reads them there when current, else works them out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragdash.lazy import exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each module loads on first use
    from ragdash.labels.exchange import (
        DEFAULT_SAMPLE,
        Imported,
        LabelFileError,
        export_csv,
        from_reference,
        import_csv,
        stand_in_name,
    )
    from ragdash.labels.findings import current, evaluate, fingerprint, refresh
    from ragdash.labels.store import (
        LABELS,
        RULES,
        STAND_IN,
        Item,
        add_label,
        current_labels,
        draw_sample,
        labelable,
        next_to_label,
        progress,
        read_labels,
        read_sample,
        sample_items,
        undo_last,
    )

_SOURCES = {
    "ragdash.labels.findings": ("current", "evaluate", "fingerprint", "refresh"),
    "ragdash.labels.exchange": ("DEFAULT_SAMPLE", "Imported", "LabelFileError", "export_csv",
                                "from_reference", "import_csv", "stand_in_name"),
    "ragdash.labels.store": ("LABELS", "RULES", "STAND_IN", "Item", "add_label",
                             "current_labels", "draw_sample", "labelable", "next_to_label",
                             "progress", "read_labels", "read_sample", "sample_items",
                             "undo_last"),
}
__all__ = ["DEFAULT_SAMPLE", "LABELS", "RULES", "STAND_IN", "Imported", "Item",
           "LabelFileError", "add_label", "current", "current_labels", "draw_sample",
           "evaluate", "export_csv", "fingerprint", "from_reference", "import_csv",
           "labelable", "next_to_label", "progress", "read_labels", "read_sample", "refresh",
           "sample_items", "stand_in_name", "undo_last"]

__getattr__, __dir__ = exports(__name__, _SOURCES, globals())
