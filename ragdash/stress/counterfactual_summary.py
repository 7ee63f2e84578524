"""The rates of RGB's counterfactual robustness test (Chen et al., AAAI 2024) with Wilson 95 %
intervals, and the files a test writes: the per-question table and the summary."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from ragdash.calibration.predictive import wilson
from ragdash.data.rgb import LICENCE
from ragdash.rundir.io import write_json, write_table

TABLE = "counterfactual.parquet"
SUMMARY = "summary.json"


@dataclass(frozen=True)
class Rate:
    """k of n, the share (RGB's 0 when n is 0) and its Wilson 95 % interval (None when n is 0)."""

    k: int
    n: int
    rate: float
    ci: tuple[float, float] | None

    @classmethod
    def of(cls, k: int, n: int) -> Rate:
        return cls(k, n, k / n if n else 0.0, tuple(wilson(k, n)) if n else None)

    def text(self) -> str:
        """'0.420 [0.327, 0.519] (42 of 100)'."""
        ci = f" [{self.ci[0]:.3f}, {self.ci[1]:.3f}]" if self.ci else " [no interval: n = 0]"
        return f"{self.rate:.3f}{ci} ({self.k} of {self.n})"


@dataclass(frozen=True)
class Summary:
    """RGB's two rates over the replies received (`n`), the failed calls left out, and how
    many corrections are refusals (RGB counts a detected refusal as corrected)."""

    model: str
    n: int
    failed: int
    detection: Rate
    correction: Rate
    refusals_corrected: int
    checker: str = "phrase"
    licence: str = LICENCE

    def lines(self) -> list[str]:
        """What the command prints."""
        how = "an LLM check" if self.checker == "judge" else "'factual errors' in the reply"
        out = [f"RGB counterfactual robustness, {self.model}: {self.n} replies, detection by "
               f"{how}"
               + (f" ({self.failed} failed calls left out, as RGB does)" if self.failed else ""),
               f"  error detection rate:  {self.detection.text()}",
               f"  error correction rate: {self.correction.text()} of the detected"]
        if self.refusals_corrected:
            out.append(f"  ({self.refusals_corrected} of the corrections are refusals, "
                       "counted as RGB counts them)")
        return [*out, "  95 % Wilson intervals. " + self.licence]


def summarise(table: pd.DataFrame, checker: str = "phrase") -> Summary:
    """The rates of a per-question table (`ragdash.stress.counterfactual.COLUMNS`) whose
    detection came from `checker` (`ragdash.stress.counterfactual_check.CHECKERS`)."""
    ok = table[table["error"].isna() & table["reply"].notna()]
    detected = int(ok["detected"].sum())
    corrected = int(ok["corrected"].sum())
    models = ok["model"].dropna().unique().tolist() or table["model"].dropna().unique().tolist()
    return Summary(", ".join(map(str, models)) or "?", len(ok), len(table) - len(ok),
                   Rate.of(detected, len(ok)), Rate.of(corrected, detected),
                   int((ok["corrected"] & ok["refused"]).sum()), checker)


def write(table: pd.DataFrame, summary: Summary, out: str | Path,
          extra: dict | None = None) -> tuple[Path, Path]:
    """Write the table and the summary (with `extra`: settings, the data file) atomically
    under `out`; their paths."""
    folder = Path(out)
    write_table(folder / TABLE, table)
    write_json(folder / SUMMARY, {**asdict(summary), **(extra or {})})
    return folder / TABLE, folder / SUMMARY
