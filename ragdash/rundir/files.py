"""Every file of a run directory, declared once: its name, the stage that writes it, the
columns a table must have (checked on write) and those it may have."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunFile:
    """One file of a run directory."""

    key: str
    filename: str
    stage: str  # the stage (or command) that writes it
    columns: tuple[str, ...] = ()  # required columns of a table (none for JSON)
    about: str = ""
    optional: tuple[str, ...] = ()  # columns a table may have (runs made before them lack them)

    @property
    def is_table(self) -> bool:
        return not self.filename.endswith(".json")


_FILES = (
    RunFile("manifest", "run.json", "every stage", about="id, config, input hashes, versions, "
            "per-stage status, counts and timings"),
    RunFile("issues", "issues.csv", "ingest", ("file", "record", "field", "message", "severity"),
            "every record skipped or warned about at ingest"),
    RunFile("examples", "examples.parquet", "ingest", ("qid", "question", "answer", "parts"),
            "the questions with their gold relevant parts (plus metadata columns)"),
    RunFile("documents", "documents.parquet", "ingest", ("doc_id", "title", "text"),
            "the corpus; documents read from PDF, HTML, DOCX or Markdown files also keep their "
            "page starts and headings (character offsets in text)", ("pages", "headings")),
    RunFile("chunks", "chunks.parquet", "chunk",
            ("chunk_id", "doc_id", "title", "text", "start", "end"),
            "the chunks with their offsets in their document; with a layout, the page and "
            "section (headings) at the chunk's start, the page of its end",
            ("page", "heading", "last_page")),
    RunFile("retrieved", "retrieved.parquet", "retrieve",
            ("qid", "retriever", "rank", "chunk_id", "score")),
    RunFile("queries", "queries.parquet", "retrieve", ("qid", "retriever", "queries"),
            "the sub-questions MLQ generated"),
    RunFile("ir_scores", "ir_scores.parquet", "score",
            ("qid", "retriever", "budget", "score", "part_scores", "context_tokens", "cut",
             "reached"), "Score_IR of every (question, retriever, budget N)"),
    RunFile("ir_scores_also", "ir_scores_also.parquet", "score",
            ("method", "qid", "retriever", "budget", "score", "part_scores", "context_tokens",
             "cut", "reached"), "Score_IR by the other matching methods of scoring.also, in "
            "the same shape with a method column (only when scoring.also is set)"),
    RunFile("ir_summary", "ir_summary.csv", "score", ("budget",),
            "mean Score_IR per budget x retriever (the paper's Table 3.1)"),
    RunFile("ir_metrics", "ir_metrics.csv", "score", ("retriever",),
            "chunk-level P/R/nDCG/RR per retriever"),
    RunFile("answers", "answers.parquet", "generate",
            ("qid", "system", "budget", "model", "answer", "latency_s", "tokens_in",
             "tokens_out", "error")),
    RunFile("judgments", "judgments.parquet", "judge",
            ("qid", "system", "budget", "judge_model", "score", "raw", "error")),
    RunFile("estimator_cv", "estimator_cv.csv", "calibrate",
            ("scheme", "fold", "method", "retriever", "n", "mae")),
    RunFile("calibration", "calibration.json", "calibrate", about="thresholds h and k, their "
            "fits, the predictiveness evidence and the estimated vs actual shares"),
    RunFile("estimate", "estimate.json", "estimate",
            about="shares estimated from saved thresholds, and the LLM calls avoided"),
)
FILES: dict[str, RunFile] = {f.key: f for f in _FILES}
"""Every run file by key, in the order the stages write them."""
MANIFEST = FILES["manifest"].filename
