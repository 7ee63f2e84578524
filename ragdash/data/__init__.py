"""Loading evaluation datasets (Q, A, relevant parts) and their corpora, with validation.

Every problem met is an `Issue` naming the file, the record and the field; a bad record is
skipped with one `error` issue, a doubtful one is kept with a `warning`. Problems that leave
nothing to load (missing file, malformed whole-file JSON, missing column) raise `DataError`.
"""

from __future__ import annotations

import bz2
import gzip
import re
from collections.abc import Mapping
from pathlib import Path, PurePath

from ragdash.data import crag, generic, hotpotqa, readers, squad, textfiles
from ragdash.data import sample as sampling
from ragdash.data.common import IssueLog, Loaded, within_limits
from ragdash.data.reading import decode, fatal, open_regular, parse_json, read_file
from ragdash.data.schema import DataError, Dataset, Document, Example, Issue
from ragdash.data.validate import check_parts_found

__all__ = ["CORPUS_FORMATS", "FORMATS", "DataError", "Dataset", "Document", "Example", "Issue",
           "detect_format", "load_corpus", "load_dataset"]

FORMATS = ("hotpotqa", "squad", "crag", "jsonl", "csv", "parquet", "xlsx")
CORPUS_FORMATS = ("jsonl", "csv", "parquet", "folder", "zip", "document")
"""'folder' and 'zip' hold document files; 'document' is one such file (.pdf, .html, ...)."""

_EXTENSIONS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
               ".parquet": "parquet", ".pq": "parquet", ".xlsx": "xlsx"}
_PEEK_BYTES = 256 * 1024


def _packed(name: str) -> str | None:
    """'.gz' or '.bz2' when a file name says it is compressed."""
    return next((s for s in (".gz", ".bz2") if name.lower().endswith(s)), None)


def _by_extension(path: Path) -> str:
    """'json', 'jsonl', 'csv', 'parquet' or 'xlsx' from the file name ('.gz' or '.bz2' allowed
    on .json, .jsonl and .csv)."""
    name = path.name.lower()
    packed = _packed(name)
    fmt = _EXTENSIONS.get(PurePath(name[: -len(packed)] if packed else name).suffix)
    if fmt is None or (packed and fmt in ("parquet", "xlsx")):
        raise fatal(path, "unknown file type; expected .json (HotpotQA or SQuAD), .jsonl (or "
                          "CRAG's), .csv, .parquet or .xlsx (.json, .jsonl and .csv may be "
                          "gzip- or bzip2-compressed)")
    return fmt


def _head(p: Path) -> str:
    """The first bytes of a file, decompressed, as text ('' when unreadable)."""
    unpack = {".gz": gzip.open, ".bz2": bz2.open}.get(_packed(p.name) or "")
    try:
        with open_regular(p) as raw, (unpack(raw, "rb") if unpack else raw) as f:
            return f.read(_PEEK_BYTES).decode("utf-8", "replace")
    except (OSError, EOFError, ValueError, DataError):
        return ""  # read_file reports the problem (a pipe or a device by name)


def _json_format(obj: object, path: Path) -> str:
    if hotpotqa.is_hotpotqa(obj):
        return "hotpotqa"
    if squad.is_squad(obj):
        return "squad"
    raise fatal(path, "JSON file is neither HotpotQA (a list of objects with "
                      "'supporting_facts') nor SQuAD (an object whose 'data' items have "
                      "'paragraphs'); for other data use JSONL, CSV or Parquet", field="(json)")


def _sniff(head: str) -> str | None:
    """The JSON format told by the start of a file, when it is clear."""
    head = head.lstrip("\ufeff \t\r\n")
    if head.startswith("[") and re.match(r'\[\s*\{', head) and '"supporting_facts"' in head:
        return "hotpotqa"
    if head.startswith("{") and re.search(r'"data"\s*:\s*\[', head) and '"paragraphs"' in head:
        return "squad"
    return None


def detect_format(path: str | Path) -> str:
    """One of FORMATS, from the file extension and, for .json, a peek at the content."""
    p = Path(path)
    if p.is_dir():
        raise fatal(p, "is a folder; a dataset is a file (a folder can be a corpus)")
    fmt = _by_extension(p)
    if fmt == "jsonl":
        return "crag" if crag.is_crag(_head(p)) else fmt
    if fmt != "json":
        return fmt
    found = _sniff(_head(p))
    if found:
        return found
    obj, _ = parse_json(read_file(p))
    return _json_format(obj, p)


def _corpus(path: str | Path, fmt: str) -> tuple[list[Document], list[Issue], str]:
    """Documents, issues and sha256 of a corpus file, folder or zip."""
    if fmt not in ("auto", *CORPUS_FORMATS):
        raise ValueError(f"unknown corpus format {fmt!r}; expected 'auto' or one of "
                         f"{CORPUS_FORMATS}")
    p = Path(path)
    if fmt == "auto":
        fmt = ("folder" if p.is_dir() else "zip" if p.name.lower().endswith(".zip")
               else "document" if readers.readable(p.name) else _by_extension(p))
        if fmt in ("json", "xlsx"):
            raise fatal(p, "a corpus is a JSONL, CSV or Parquet file with doc_id, title, text, "
                           "a folder or .zip of document files, or one such file "
                           f"({textfiles.TYPES})")
    if fmt == "folder":
        docs, log, digest = textfiles.load_folder(p)
        return docs, log.issues, digest
    raw = read_file(p)
    if fmt in ("zip", "document"):
        docs, log = (textfiles.load_zip if fmt == "zip" else textfiles.load_document)(raw)
    else:
        log = IssueLog(p)
        docs = generic.load_documents(raw, fmt, log)
    return docs, log.issues, raw.sha256


def load_corpus(path: str | Path, fmt: str = "auto") -> tuple[list[Document], list[Issue]]:
    """Documents of a JSONL/CSV/Parquet file (doc_id, title?, text), of a folder or .zip of
    document files (.txt, .md, .pdf, .html, .htm, .docx) or of one such file, with the issues
    met. `fmt` is 'auto' or one of CORPUS_FORMATS."""
    docs, issues, _ = _corpus(path, fmt)
    return docs, issues


def _examples(raw, fmt: str, path: str | Path, corpus, limit: int | None,
              include_unanswerable: bool, sheet: str | None = None,
              columns: Mapping[str, str] | None = None) -> tuple[Loaded, IssueLog, str]:
    """(examples, their issue log, the format read) of a dataset file."""
    if fmt == "auto":
        fmt = _by_extension(raw.path)
        fmt = "crag" if fmt == "jsonl" and crag.is_crag(raw.data[:_PEEK_BYTES].decode(
            "utf-8", "replace")) else fmt
    log = IssueLog(path)
    if fmt in ("json", "hotpotqa", "squad"):
        if sheet is not None or columns:
            raise fatal(raw.path, "a sheet or a column mapping is given (--sheet, --columns; "
                                  "dataset.sheet, dataset.columns) but the dataset is "
                                  "HotpotQA/SQuAD JSON, whose fields are fixed; leave them out")
        obj, text = parse_json(raw)
        fmt = _json_format(obj, raw.path) if fmt == "json" else fmt
        if fmt == "hotpotqa":
            loaded = hotpotqa.load(obj, text, log, limit=limit, build_corpus=corpus is None)
        else:
            loaded = squad.load(obj, text, log, limit=limit, build_corpus=corpus is None,
                                include_unanswerable=include_unanswerable)
    elif fmt == "crag":
        if sheet is not None or columns:
            raise fatal(raw.path, "a sheet or a column mapping is given but the dataset is "
                                  "CRAG JSONL, whose fields are fixed; leave them out")
        loaded = crag.load(decode(raw.data), log, limit=limit, build_corpus=corpus is None)
    elif corpus is None:
        raise fatal(raw.path, f"a {fmt} dataset needs a corpus: pass corpus=<a JSONL/CSV/Parquet "
                              "file, a folder or .zip of document files, or one document file>")
    else:
        loaded = generic.load_examples(raw, fmt, log, limit=limit, sheet=sheet, columns=columns)
    within_limits(loaded, log)
    return loaded, log, fmt


def load_questions(path: str | Path, fmt: str = "auto", *, include_unanswerable: bool = False,
                   limit: int | None = None, sample: dict | None = None,
                   sheet: str | None = None, columns: Mapping[str, str] | None = None
                   ) -> list[Example]:
    """The examples `load_dataset` would keep, without reading or building any corpus: what a
    run's questions are before it starts (the Build page's LLM estimate)."""
    raw = read_file(path)
    rule = sampling.check_rule(sample)
    # a corpus named (here the dataset itself, never read): no corpus is built from the file
    loaded, _, _ = _examples(raw, fmt, path, path, None if rule else limit,
                             include_unanswerable, sheet, columns)
    _apply_sample(loaded, rule, limit)
    return list(loaded.examples)


def _apply_sample(loaded: Loaded, rule: dict | None, limit: int | None) -> None:
    """Keep the examples (and their labels) the sampling rule picks, the first `limit` of them;
    nothing without a rule (the loader then applied `limit` itself)."""
    if rule:
        loaded.examples, loaded.labels = sampling.sample(
            loaded.examples, loaded.labels,
            {**rule, "n": min(filter(None, (rule["n"], limit)), default=None)})
        loaded.extra["sample"] = {**rule, "limit": limit, "rule": sampling.describe(rule)}


def load_dataset(path: str | Path, fmt: str = "auto", *, corpus: str | Path | None = None,
                 corpus_fmt: str = "auto", include_unanswerable: bool = False,
                 limit: int | None = None, sample: dict | None = None,
                 sheet: str | None = None, columns: Mapping[str, str] | None = None) -> Dataset:
    """Examples and corpus of a dataset file.

    HotpotQA and SQuAD files carry their corpus (used unless `corpus` is given); JSONL, CSV,
    Parquet and .xlsx datasets need `corpus`. `limit` keeps the first N valid examples (and, for
    a corpus built from the dataset file, only their documents). Relevant parts found in no
    document are reported as warnings. `sample` ({per_context, every, n}, `ragdash.data.sample`)
    keeps questions by a fixed rule and the whole corpus; `limit` then applies to the sampled ones.
    `sheet` names the sheet of an .xlsx workbook (default: its only sheet with data); `columns`
    ({role: column}, `ragdash.data.columns`) maps a JSONL/CSV/Parquet/.xlsx file's columns.
    """
    if fmt not in ("auto", *FORMATS):
        raise ValueError(f"unknown dataset format {fmt!r}; expected 'auto' or one of {FORMATS}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    rule = sampling.check_rule(sample)
    load_limit = None if rule else limit
    raw = read_file(path)
    try:
        loaded, log, fmt = _examples(raw, fmt, path, corpus, load_limit, include_unanswerable,
                                     sheet, columns)
    except DataError as exc:
        if fmt == "auto":
            raise
        raise exc.read_as_given(fmt, "--format or the config's dataset.format",
                                "use --format auto or dataset.format: auto to detect it from "
                                "the file") from None
    _apply_sample(loaded, rule, limit)
    documents, issues, corpus_sha = loaded.documents, list(log.issues), None
    if corpus is not None:
        documents, corpus_issues, corpus_sha = _corpus(corpus, corpus_fmt)
        issues += corpus_issues
    if loaded.examples and not documents:
        first = f"; first issue: {issues[0]}" if issues else ""
        raise fatal(corpus or raw.path, f"the corpus holds no usable document{first}")
    check = IssueLog(path)
    check_parts_found(loaded.examples, loaded.labels, documents, check)
    source = {"dataset": str(path), "format": fmt,
              "corpus": None if corpus is None else str(corpus), "sha256": raw.sha256,
              "corpus_sha256": corpus_sha, "records": loaded.records, **loaded.extra}
    return Dataset(loaded.examples, documents, issues + check.issues, source)
