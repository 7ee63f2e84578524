"""What run.json records about each stage, typed (`StageRecord`), and the one table of them
the dashboard shows (`stage_table`: the Overview, the Build page and the job panel)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields

import pandas as pd

MARKS = {"done": "✓", "failed": "✗", "running": "…", "interrupted": "⏸"}
"""A stage status in one character ("?" for any other, e.g. waiting)."""


@dataclass(frozen=True)
class StageRecord:
    """One stage's record in run.json; `status` is "waiting" for a stage with no record."""

    name: str
    status: str = "waiting"  # or running, done, failed, interrupted
    key: str | None = None  # the hash of the settings and inputs it ran with
    started: str | None = None
    finished: str | None = None
    seconds: float | None = None
    counts: dict = field(default_factory=dict)
    error: str | None = None
    warnings: tuple[dict, ...] = ()  # e.g. retrievers that returned nothing
    reused_from: str | None = None  # the run a sweep copied the stage's files from

    @classmethod
    def from_dict(cls, name: str, record: dict | None) -> StageRecord:
        """The record as run.json keeps it (fields this version does not know are left out)."""
        known = {f.name for f in fields(cls)} - {"name"}
        d = {k: v for k, v in (record or {}).items() if k in known and v is not None}
        d["counts"] = dict(d.get("counts") or {})
        d["warnings"] = tuple(d.get("warnings") or ())
        if "seconds" in d:
            d["seconds"] = float(d["seconds"])
        return cls(name, **d)

    @property
    def done(self) -> bool:
        return self.status == "done"

    @property
    def mark(self) -> str:
        return MARKS.get(self.status, "?")


def _counts_text(counts: dict) -> str:
    """"examples: 60, skipped: 0": counts without a value (None) or with parts (a dict) left
    out, never shown as "None"."""
    return ", ".join(f"{a}: {round(b, 3) if isinstance(b, float) else b}"
                     for a, b in counts.items() if b is not None and not isinstance(b, dict))


def stage_table(records: Iterable[StageRecord]) -> pd.DataFrame:
    """One row per stage, in the order given: stage, status, mark, seconds (to 0.1 s), finished
    and its counts in words."""
    return pd.DataFrame([{"stage": r.name, "status": r.status, "mark": r.mark,
                          "seconds": None if r.seconds is None else round(r.seconds, 1),
                          "finished": r.finished, "counts": _counts_text(r.counts)}
                         for r in records],
                        columns=["stage", "status", "mark", "seconds", "finished", "counts"])
