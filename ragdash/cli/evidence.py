"""`ragdash evidence`: find relevant parts for a dataset that has only id, question, answer (and
a corpus), and write a generic JSONL dataset that `ragdash run` takes as it is."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragdash.cli.options import add_declared, add_llm_options, llm_options
from ragdash.evidence.finder import Progress
from ragdash.evidence.records import EvidenceResult

if TYPE_CHECKING:
    from ragdash.config import RunSpec
    from ragdash.data.schema import Dataset
    from ragdash.evidence.settings import EvidenceSettings
    from ragdash.llm import LLMSettings
    from ragdash.rundir.root import RunsRoot

HELP = "find relevant parts in the corpus for a dataset that has only questions and answers"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the subcommand on the `ragdash` subparsers."""
    p = sub.add_parser("evidence", help=HELP, description=HELP + ". Candidates are the "
                       "sentences holding the answer, ranked by BM25 and MiniLM similarity to "
                       "the question; one to three are kept, each marked parts_source 'auto' "
                       "with a confidence in [0, 1]. Questions without evidence are written "
                       "with parts_source 'none' and the reason.")
    p.add_argument("--dataset", required=True, help="dataset file: JSONL/CSV/Parquet/.xlsx with "
                                                     "id, question, answer (or HotpotQA/SQuAD)")
    p.add_argument("-o", "--output", required=True, help="the JSONL dataset to write")
    add_declared(p, {k: v for k, v in OPTIONS.items() if k not in ("dataset", *llm_options())})
    p.add_argument("--config", help="YAML config (its dataset.evidence and llm sections)")
    p.add_argument("--llm", action="store_true", help="when the answer occurs verbatim in no "
                   "document, ask the LLM which candidate sentences support each answer "
                   "sentence (a short answer: to quote a supporting sentence)")
    add_llm_options(p, "the LLM --llm asks")
    p.add_argument("--dry-run", action="store_true", help="send no LLM call and write nothing: "
                   "price the calls --llm would send (found by running the finder with "
                   "nothing sent; those the reply cache answers left out)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    return p


OPTIONS: dict[str, str] = {
    "dataset": "dataset.path", "corpus": "dataset.corpus", "format": "dataset.format",
    "corpus_format": "dataset.corpus_format", "limit": "dataset.limit",
    "sheet": "dataset.sheet", "columns": "dataset.columns",
    "max_parts": "dataset.evidence.max_parts", "margin": "dataset.evidence.margin",
    **llm_options(),
}
"""Each option and the dotted config key it sets."""


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The options given, as dotted config overrides (`ragdash.config.load_spec`)."""
    out = {key: getattr(args, opt) for opt, key in OPTIONS.items()
           if getattr(args, opt) not in (None, "")}
    out.setdefault("dataset.format", "auto")
    if args.llm:
        out["dataset.evidence.llm"] = True
    return out


def report(result: EvidenceResult, shown: int = 20) -> list[str]:
    """What the command prints: how many questions got evidence, and the others with why."""
    s = result.summary()
    methods = {"answer": "holding the answer", "llm": "quoted by the LLM",
               "aligned": "aligned with the answer's sentences",
               "aligned-llm": "aligned and confirmed by the LLM"}
    how = ", ".join(f"{n} {methods.get(m, m)}" for m, n in s["by_method"].items())
    lines = [f"Evidence found for {s['found']} of {s['questions']} questions "
             f"({s['parts']} parts" + (f"; {how}" if how else "") + ")."]
    if s["missing"]:
        lines.append(f"{s['missing']} question(s) without evidence are kept apart: written with "
                     "parts_source 'none' and the reason (`ragdash run` lists them as skipped):")
        lines += [f"  {q.qid}: {q.reason}" for q in result.missing[:shown]]
        if s["missing"] > shown:
            lines.append(f"  … and {s['missing'] - shown} more (see the file)")
        if not result.settings.llm:
            lines.append("(--llm asks the LLM to quote a supporting sentence for them; a quote "
                         "is kept only if it occurs verbatim in a document)")
    return lines


def run(args: argparse.Namespace, progress: Progress | None = None) -> int:
    from ragdash.config import load_spec
    from ragdash.data import load_dataset
    from ragdash.embeddings import configured
    from ragdash.evidence import output
    from ragdash.evidence.finder import find_evidence
    from ragdash.rundir.root import RunsRoot

    spec = load_spec(args.config, _overrides(args))
    ds = spec.dataset
    dataset = load_dataset(ds.path, ds.format, corpus=ds.corpus, corpus_fmt=ds.corpus_format,
                           limit=ds.limit, sheet=ds.sheet, columns=ds.columns)
    gold = {e.qid: e.parts for e in dataset.examples if e.parts}
    if gold:
        print(f"note: {len(gold)} question(s) already have relevant parts; evidence is found "
              "anyway (ignoring them) and compared with them below.")
    settings = ds.evidence
    llm = None
    if settings.llm:
        from ragdash.llm import LLMSettings

        llm = LLMSettings.from_config(spec.llm)
    root = RunsRoot(spec.runs_root)
    if args.dry_run:
        return _dry_run(dataset, settings, llm, root, spec)
    with configured(root.path, spec.embeddings.precision, spec.embeddings.cache):
        result = find_evidence(dataset.examples, dataset.documents, settings, llm=llm,
                               cache=root.llm_cache if llm else None, progress=progress)
    target = output.write_jsonl(output.dataset_rows(result), args.output)
    corpus = ds.corpus
    if corpus is None:  # HotpotQA/SQuAD carry their corpus: write it beside the dataset
        corpus = target.with_name(f"{target.stem}.corpus.jsonl")
        output.write_jsonl([{"doc_id": d.doc_id, "title": d.title, "text": d.text}
                            for d in dataset.documents], corpus)
        print(f"The corpus of {Path(ds.path).name} is written to {corpus}.")
    print("\n".join(report(result)))
    if gold:
        a = output.agreement(output.found_parts(result), gold)
        print(f"Against the given parts ({a['questions']} questions with both): a found part "
              f"equals a given one for {a['equal_share']:.0%}, overlaps one for "
              f"{a['overlap_share']:.0%}." if a["questions"]
              else "No question has both given and found parts.")
    print(f"Wrote {target}. Evaluate with: ragdash run --dataset {target} --corpus {corpus}")
    return 0


def _dry_run(dataset: Dataset, settings: EvidenceSettings, llm: LLMSettings | None,
             root: RunsRoot, spec: RunSpec) -> int:
    """What `--llm` would cost on `dataset`, with no call sent and no file written."""
    from ragdash.embeddings import configured
    from ragdash.evidence.finder import call_plan
    from ragdash.llm.plan import answered_note

    if llm is None:
        print("Dry run: without --llm the finder calls no LLM; nothing to price.")
        return 0
    with configured(root.path, spec.embeddings.precision, spec.embeddings.cache):
        plan = call_plan(dataset.examples, dataset.documents, settings, llm)
    est, cached = plan.price(llm, root)
    print("Dry run, no LLM call made, nothing written. The evidence finder would cost:")
    print(f"    evidence: {est}")
    if cached:
        print(f"    note: {answered_note('evidence', cached)}")
    return 0

