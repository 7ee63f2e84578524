"""The Build page's form as data: what its widgets hold, what keeps the run from starting, and
the `ragdash run --set` overrides it starts the run with, built without Streamlit so the form's
meaning is tested apart from its widgets (the paths it names are checked against the allowed
roots, and the specification validated, by the page).

    form = BuildForm(name, dataset, ...); form.problems(); form.overrides(runs_root)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdash.budget import parse_budgets
from ragdash.constants import DEFAULT_SCORING_METHOD
from ragdash.rundir.manage import RUN_NAME


@dataclass(frozen=True)
class BuildForm:
    """Sections 1–5 of the Build page: the run's name; the dataset section (`dataset`: path,
    format, corpus, corpus_format, and a workbook's sheet and columns when given) with where it
    came from (`source`: sample, upload or path) and the Data page's upload record; the first
    `limit` questions (0: all); the chunker and its parameters; the retrievers, their preset and
    parameters; tokenizer, budgets, matching method and mode; and, when the LLM stages are on,
    the generator's and the judge's `llm` sections, the judge mode and the generation prompt;
    the live retrievers among the retrievers (`custom`, from the server's config file); the
    imported systems (`systems`)."""

    name: str
    dataset: dict[str, Any]
    source: str = "sample"
    upload: dict[str, Any] | None = None
    limit: int = 0
    chunker: str = "semantic"
    chunker_params: dict[str, Any] = field(default_factory=dict)
    max_chars: int = 0
    preset: str = "paper"
    retrievers: list[str] = field(default_factory=list)
    retriever_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    tokenizer: str = "llama3"
    budgets: str = "100:1000:100"
    matching: str = DEFAULT_SCORING_METHOD
    mode: str = "corrected"
    llm: dict[str, Any] | None = None
    judge: dict[str, Any] | None = None
    judge_mode: str = "stepwise"
    prompt: str = "abstain"
    custom: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The live retrievers chosen, as the server's config file has them
    (`ragdash.retrieval.custom.configured`): never typed on the page."""
    systems: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Imported systems compared beside the retrievers: {name: {file, format}}, as uploaded on
    the Data page (`ragdash.ui.systems_upload`)."""

    def problems(self) -> list[str]:
        """What keeps the run from starting, in the page's words (none: it may start once the
        specification validates)."""
        out = []
        if not RUN_NAME.match(self.name or ""):
            out.append("The run name may hold letters, digits, '.', '_' and '-' (64 at most).")
        if not self.retrievers and not self.systems:  # systems alone are compared as they are
            out.append("Pick at least one retriever (or give your own system's results on the "
                       "Data page).")
        if not self.dataset.get("path"):
            out.append("Choose a dataset.")
        elif self.source == "upload" and self.upload and not self.upload.get("examples"):
            out.append(f"{self.upload['name']} has no valid question: the Data page lists why "
                       "each record was skipped.")
        try:
            parse_budgets(self.budgets)
        except ValueError as exc:
            out.append(f"Budgets: {exc}")
        return out

    def overrides(self, runs_root: Path | str) -> dict[str, Any]:
        """The run's settings as dotted keys, as `ragdash run --set` takes them."""
        out: dict[str, Any] = {
            "name": self.name, "runs_root": str(runs_root),
            **{f"dataset.{k}": v for k, v in self.dataset.items()},
            "dataset.limit": int(self.limit) or None,
            "chunker.method": self.chunker,
            **{f"chunker.params.{k}": v for k, v in self.chunker_params.items()},
            "chunker.max_chars": int(self.max_chars) or None,
            "retrievers.preset": self.preset, "retrievers.use": list(self.retrievers),
            **{f"retrievers.params.{r}.{k}": v for r, ps in self.retriever_params.items()
               for k, v in ps.items()},
            **{f"retrievers.custom.{r}": dict(spec) for r, spec in self.custom.items()},
            "tokenizer": self.tokenizer, "budgets": self.budgets,
            "scoring.method": self.matching, "scoring.mode": self.mode,
            **{f"systems.{n}.{k}": v for n, s in self.systems.items() for k, v in s.items()},
        }
        if self.llm is not None:
            out.update({f"llm.{k}": v for k, v in self.llm.items() if v is not None})
            out.update({f"judge.llm.{k}": v for k, v in (self.judge or {}).items()
                        if v is not None})
            out.update({"generation.enabled": True, "generation.prompt": self.prompt,
                        "judge.enabled": True, "judge.mode": self.judge_mode,
                        "calibration.enabled": True})
        return out
