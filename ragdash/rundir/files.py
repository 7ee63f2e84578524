"""Every file of a run directory, declared once: its name, the stage that writes it, the
columns a table must have (checked on write), those it may have, and how a table written before
one of those existed is read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ragdash.rundir.io import read_table
from ragdash.rundir.manifest import RunFileError


def _with_answers(examples: pd.DataFrame) -> pd.DataFrame:
    """examples.parquet written before `answers`: each question's one gold answer as its list."""
    if "answers" in examples.columns or "answer" not in examples.columns:
        return examples
    return examples.assign(answers=[[a] if isinstance(a, str) and a.strip() else []
                                    for a in examples["answer"]])


def _with_long_metrics(reference: pd.DataFrame) -> pd.DataFrame:
    """reference.parquet written before ROUGE-L and similarity: those columns empty (NaN)."""
    missing = [c for c in ("rouge_l", "similarity") if c not in reference.columns]
    return reference.assign(**dict.fromkeys(missing, float("nan"))) if missing else reference


@dataclass(frozen=True)
class RunFile:
    """One file of a run directory."""

    key: str
    filename: str
    stage: str  # the stage (or command) that writes it
    columns: tuple[str, ...] = ()  # required columns of a table (none for JSON)
    about: str = ""
    optional: tuple[str, ...] = ()  # columns a table may have (runs made before them lack them)
    upgrade: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    """Fills in an optional column that a table written before it lacks (on every read)."""
    conditional: bool = False
    """Written only under some settings (MLQ's sub-questions, scoring.also's scores): a run
    without it is complete."""

    @property
    def is_table(self) -> bool:
        return not self.filename.endswith(".json")

    def read(self, path: Path) -> pd.DataFrame:
        """The table at `path`, upgraded to the current columns; RunFileError naming it, the
        reason and the stage that writes it again when it cannot be read (a damaged file)."""
        try:
            df = read_table(path)
        except FileNotFoundError:
            raise
        except Exception as exc:  # pyarrow's errors have no common base below Exception
            raise self.unreadable(path, exc) from exc
        return self.upgrade(df) if self.upgrade else df

    def unreadable(self, path: Path, why: object) -> RunFileError:
        """The error saying the file at `path` cannot be read, and how to write it again."""
        reason = " ".join(str(why).replace(str(path), path.name).split())[:300] \
            or type(why).__name__
        then = f"cannot be read ({reason}): run the {self.stage} stage again to write it anew"
        return RunFileError(f"{path} {then}", shown=f"The run's {path.name} {then}")


_FILES = (
    RunFile("manifest", "run.json", "every stage", about="id, config, input hashes, versions, "
            "per-stage status, counts and timings"),
    RunFile("issues", "issues.csv", "ingest", ("file", "record", "field", "message", "severity"),
            "every record skipped or warned about at ingest"),
    RunFile("examples", "examples.parquet", "ingest", ("qid", "question", "answer", "parts"),
            "the questions with their gold relevant parts (plus metadata columns) and every gold "
            "answer (`answers`, `answer` first; runs made before it read as [answer])",
            ("answers",), _with_answers),
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
            "the sub-questions MLQ generated", conditional=True),
    RunFile("passages", "passages.parquet", "retrieve",
            ("chunk_id", "doc_id", "title", "text", "start", "end", "retriever"),
            "the passages live retrievers returned (retrievers.custom), looked up as chunks by "
            "the chunk ids in retrieved.parquet (ragdash.retrieval.passages)", conditional=True),
    RunFile("imported", "imported.parquet", "retrieve",
            ("system", "qid", "record", "contexts", "context_ids", "doc_ids", "scores",
             "answer"), "each imported system's record of each question it has: its contexts "
            "in rank order, their chunk ids in retrieved.parquet, document ids and scores where "
            "given, its answer (ragdash.systems)", conditional=True),
    RunFile("ir_scores", "ir_scores.parquet", "score",
            ("qid", "retriever", "budget", "score", "part_scores", "context_tokens", "cut",
             "reached"), "Score_IR of every (question, retriever, budget N)"),
    RunFile("ir_scores_also", "ir_scores_also.parquet", "score",
            ("method", "qid", "retriever", "budget", "score", "part_scores", "context_tokens",
             "cut", "reached"), "Score_IR by the other matching methods of scoring.also, in "
            "the same shape with a method column (only when scoring.also is set)",
            conditional=True),
    RunFile("ir_summary", "ir_summary.csv", "score", ("budget",),
            "mean Score_IR per budget x retriever (the paper's Table 3.1)"),
    RunFile("ir_metrics", "ir_metrics.csv", "score", ("retriever",),
            "chunk-level P/R/nDCG/RR per retriever"),
    RunFile("answers", "answers.parquet", "generate",
            ("qid", "system", "budget", "model", "answer", "latency_s", "tokens_in",
             "tokens_out", "error")),
    RunFile("reference", "reference.parquet", "reference",
            ("qid", "system", "budget", "em", "f1", "contains"),
            "each answer against the gold answers, no LLM: SQuAD exact match and token F1, "
            "whether it contains one, ROUGE-L and the MiniLM cosine (each the maximum over the "
            "gold answers)", optional=("rouge_l", "similarity"), upgrade=_with_long_metrics),
    RunFile("judgments", "judgments.parquet", "judge",
            ("qid", "system", "budget", "judge_model", "score", "raw", "error")),
    RunFile("metrics", "metrics.parquet", "metrics",
            ("qid", "system", "budget", "model", "error", "notes", "calls", "tokens_in",
             "tokens_out", "latency_s", "detail"),
            "RAGAS and RAGChecker metrics of each answer, a column per metric in [0, 1] (NaN "
            "with the failed step in `error`, or the reason in `notes`); `detail` keeps the "
            "claims and verdicts (ragdash.metrics)"),
    RunFile("erag", "erag.parquet", "erag",
            ("qid", "system", "k", "judged", "erag_precision", "erag_map", "erag_mrr",
             "erag_ndcg", "erag_hit", "errors", "metric"),
            "eRAG per (question, retriever): precision, MAP, MRR, nDCG and hit at k of the "
            "labels of its top k chunks, each given alone to the generator (ragdash.erag)"),
    RunFile("erag_labels", "erag_labels.parquet", "erag",
            ("qid", "system", "rank", "chunk_id", "answer", "label", "error", "model",
             "tokens_in", "tokens_out", "latency_s", "cached"),
            "eRAG per judged chunk: the generator's output given the question and that chunk "
            "alone, its label (the downstream metric against the gold answers; 0 for a failed "
            "call, whose error is kept) and its cost"),
    RunFile("stress", "stress.parquet", "stress",
            ("qid", "test", "ratio", "position", "relevant", "noise", "chunk_ids", "budget",
             "score_ir", "answer", "error", "correct", "refused"),
            "contexts built from the run's chunks with known relevance (noise ratios, positions "
            "of the evidence), each with its Score_IR at the generation budget, the generator's "
            "answer, whether it contains a gold answer and whether it refuses "
            "(ragdash.stress)"),
    RunFile("label_sample", "label_sample.parquet", "label",
            ("qid", "system", "position", "rule", "seed", "drawn"),
            "the answers to label, drawn once by a rule fixed before labelling (uniform at "
            "random with a seed, or stratified by system), in labelling order"),
    RunFile("labels", "labels.parquet", "label",
            ("qid", "system", "label", "score", "labeller", "time", "comment"),
            "human labels of answers (correct 5 / partly correct 3 / wrong 1 / cannot tell: "
            "no score), one per answer and labeller; answer_sha ties each to the text labelled",
            ("answer_sha",)),
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
