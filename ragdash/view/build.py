"""The Build page's model: where the dataset comes from and the `dataset` section each source
gives, the chunk preview's k, the settings a sweep may vary, the start button's words, the
LLM stages' estimate as lines, and the earlier runs' table, built by pure functions so the page
only lays them out and each is tested without a browser (the form's overrides and problems:
`ragdash.view.build_form.BuildForm`). Text here is Markdown with user-given names passed through
`md` and `code` by the caller's choice.

    rows = earlier_runs(list_runs(root), name=label)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from ragdash import run_spec as saved
from ragdash.data.columns import describe as describe_columns
from ragdash.rundir import Run, stage_table

SOURCES = ("sample", "upload", "path")
"""Where a run's dataset comes from: the bundled sample, the Data page's upload, a server path."""
SWEEP_SETTINGS = ("chunker.method", "chunker.max_chars", "tokenizer", "scoring.method")
"""The settings a sweep of the Build page may vary, besides each built-in retriever's k."""
SWEEP_EXAMPLES = {"chunker.method": "semantic, recursive", "chunker.max_chars": "500, 1000",
                  "tokenizer": "llama3, cl100k", "scoring.method": "substring, semantic"}
"""The placeholder of each setting's values (any other: "5, 10")."""
EARLIER_COLUMNS = ["run", "updated", "questions", "retrievers", "chunker", "stages"]


def source_names(sample: str, upload: Mapping[str, Any] | None) -> dict[str, str]:
    """Each source in words: the bundled sample's file name `sample`, the upload's name (or
    that there is none yet)."""
    return {"sample": f"Bundled HotpotQA sample ({sample})",
            "upload": "Uploaded on the Data page" + (f": {upload['name']}" if upload else
                                                      " (nothing uploaded yet)"),
            "path": "A file on this server"}


def dataset_section(source: str, sample: str, upload: Mapping[str, Any] | None,
                    path: str = "", corpus: str = "") -> dict[str, Any]:
    """The run's `dataset` section for a source: the bundled sample's path; the upload's
    files and formats, with a workbook's sheet and a column mapping only when the Data page
    chose them (so the keys of other runs stay as they were); or the typed paths. No path
    before an upload."""
    ds: dict[str, Any] = {"format": "auto", "corpus": None, "corpus_format": "auto"}
    if source == "sample":
        ds["path"] = sample
    elif source == "upload":
        if upload:
            ds.update(path=upload["dataset"], format=upload["format"], corpus=upload["corpus"],
                      corpus_format=upload["corpus_format"])
            ds.update({k: upload[k] for k in ("sheet", "columns") if upload.get(k)})
    else:
        ds.update(path=path, corpus=corpus or None)
    return ds


def upload_caption(upload: Mapping[str, Any], md: Callable[[str], str] = str,
                   code: Callable[[str], str] = str) -> str:
    """'20 valid questions in qa.xlsx, sheet Tickets, columns `…`, corpus docs.zip'."""
    return (f"{upload['examples']:,} valid questions in {md(upload['name'])}"
            + (f", sheet {md(upload['sheet'])}" if upload.get("sheet") else "")
            + (", columns " + code(describe_columns(upload["columns"]))
               if upload.get("columns") else "")
            + (f", corpus {md(upload['corpus_name'])}" if upload.get("corpus") else ""))


def preview_k(params: Mapping[str, Mapping[str, Any]]) -> int:
    """The most chunks any chosen retriever keeps (at least 1): the preview warns when the
    corpus has too few to tell retrievers apart."""
    return max([int(p.get("k") or 0) for p in params.values()] + [1])


def sweep_settings(chosen: Sequence[str], builtin: Iterable[str]) -> list[str]:
    """The settings a sweep may vary: SWEEP_SETTINGS, then each chosen built-in retriever's k
    (a live retriever's settings are the server's)."""
    known = set(builtin)
    return [*SWEEP_SETTINGS, *(f"retrievers.params.{r}.k" for r in chosen if r in known)]


def start_label(runs: int) -> str:
    """The start button: one run, or a sweep's `runs`."""
    return f"▶ Start the {runs} runs" if runs else "▶ Start the run"


def estimate_lines(est: Mapping[str, object]) -> list[tuple[str, str]]:
    """The dry run's estimate (`ragdash.planning.before_run`) as (part, what it costs) lines,
    in its order."""
    return [(str(part), str(value)) for part, value in est.items()]


def earlier_runs(runs: Sequence[Run], name: Callable[[str], str] = str
                 ) -> tuple[pd.DataFrame, dict[str, str | None]]:
    """The earlier runs' table (run, updated, questions, retrievers, chunker, each stage with
    its mark) and, by run folder, why its run.json cannot be read (None when it can): such a
    run is listed with its reason, and can still be renamed or deleted."""
    rows, problems = [], {}
    for r in runs:
        problems[str(r.path)] = problem = saved.problem(r)
        if problem:
            rows.append({"run": r.path.name, "stages": f"unreadable: {problem}"})
            continue
        spec, stages = saved.run_spec(r), r.stages()
        rows.append({
            "run": r.id, "updated": r.manifest.get("updated", ""),
            "questions": stages["ingest"].counts.get("examples") if "ingest" in stages else None,
            "retrievers": ", ".join(name(x) for x in spec.compared),
            "chunker": spec.chunker.method,
            "stages": " ".join(f"{s} {mark}" for s, mark in
                               stage_table(stages.values())[["stage", "mark"]].values)})
    return pd.DataFrame(rows, columns=EARLIER_COLUMNS), problems
