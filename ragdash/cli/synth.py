"""`ragdash synth`: a synthetic test set from a corpus alone, written as a generic JSONL dataset
that `ragdash run --dataset OUT --corpus DOCS` takes as it is (rejects beside it)."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from ragdash.cli.options import add_declared, add_llm_options, declared_overrides, llm_options
from ragdash.synth.records import REASONS, SynthResult
from ragdash.synth.settings import SynthSettings
from ragdash.terminal import safe

HELP = "generate questions, answers and verbatim relevant parts from a corpus with an LLM"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the subcommand on the `ragdash` subparsers."""
    p = sub.add_parser("synth", help=HELP, description=HELP + ". Chunks are sampled across "
                       "documents (round-robin, seeded); the LLM writes a question, its answer "
                       "and the span of the chunk that answers it; a pair is kept when the span "
                       "occurs verbatim in the document and holds the answer, and the question "
                       "repeats no kept one. The cost estimate is printed first; replies are "
                       "cached, so a run that was stopped resumes when run again.")
    p.add_argument("--corpus", required=True, help="corpus file, folder or .zip of documents")
    p.add_argument("--corpus-format", default="auto", help="corpus format (default: auto)")
    p.add_argument("-o", "--output", required=True, help="the JSONL dataset to write (the "
                   "rejected pairs go to OUTPUT.rejects.jsonl beside it)")
    add_declared(p, SETTINGS, model=SynthSettings)
    p.add_argument("--config", help="YAML config (its llm section and runs_root: caches)")
    add_llm_options(p, "the LLM that writes the pairs")
    p.add_argument("--dry-run", action="store_true", help="print the sample and the cost "
                                                          "estimate only; no LLM call")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    return p


SETTINGS = {name: name for name in SynthSettings.model_fields}
"""Each option of what to generate and the `SynthSettings` field it sets (`--n`, `--seed`,
`--multihop`, `--check-leakage`, `--dedup-threshold`, `--chunker`)."""


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The LLM options given, as dotted config overrides (`ragdash.config.load_spec`)."""
    return declared_overrides(args, llm_options())


def report(result: SynthResult, rejects_file: str = "", shown: int = 10) -> list[str]:
    """What the command prints: the acceptance rate, rejections by reason, the first rejects."""
    s = result.summary()
    if not s["generated"]:
        return ["No chunk to ask about: the corpus holds no text."]
    lines = [f"Kept {s['kept']} of {s['generated']} generated pairs ({s['acceptance']:.0%} "
             f"accepted), written from {s['documents_used']} of {s['documents']} documents; "
             f"model {s['model']}, prompt {s['prompt_version']}."]
    if s["reasons"]:
        lines.append(f"Rejected {s['rejected']}:")
        lines += [f"  {n:>4}  {REASONS[r]} ({r})" for r, n in s["reasons"].items()]
        lines.append("First rejected pairs" + (f" (all in {rejects_file})" if rejects_file
                                                 else "") + ":")
        for a in result.rejected[:shown]:
            q = f" Q: {a.reply.question[:100]!r}" if a.reply and a.reply.question else ""
            lines.append(f"  {a.qid} [{a.reason}] {a.why()[:160]}{q}")
    return lines


def run(args: argparse.Namespace, progress: Any = None) -> int:
    from ragdash.config import load_spec
    from ragdash.data import load_corpus
    from ragdash.embeddings import configured
    from ragdash.llm.settings import LLMSettings
    from ragdash.llm.types import LLMError
    from ragdash.rundir.root import RunsRoot
    from ragdash.synth.estimate import describe, estimate
    from ragdash.synth.sample import sample
    from ragdash.synth.settings import settings_of
    from ragdash.synth.synthesize import synthesize
    from ragdash.synth.write import write

    spec = load_spec(args.config, _overrides(args))
    settings = settings_of(declared_overrides(args, SETTINGS))
    llm, root = LLMSettings.from_config(spec.llm), RunsRoot(spec.runs_root)
    documents, issues = load_corpus(args.corpus, args.corpus_format)
    for issue in issues[:5]:
        print(f"warning: {safe(issue)}", file=sys.stderr)
    if not documents:
        raise ValueError(f"{args.corpus}: the corpus holds no usable document")
    # the embedding cache of the runs root, as a run uses it
    with configured(root.path, spec.embeddings.precision, spec.embeddings.cache):
        items = sample(documents, settings)
        per_doc = Counter(i.chunks[0].doc_id for i in items)
        print(f"Sampled {len(items)} chunk{'s' if len(items) != 1 else ''} ({settings.chunker}) "
              f"from {len(per_doc)} of {len(documents)} documents, at most "
              f"{max(per_doc.values(), default=0)} per document"
              + (", each with a partner chunk of another document" if settings.multihop else "")
              + ".")
        for what, e in estimate(items, settings, llm, root).items():
            print(f"Estimate, {what}: {describe(e)}")
        if args.dry_run:
            return 0
        print(f"[llm] synth: {llm.backend} model {llm.model or '(default)'}"
              + (f" at {llm.base_url}" if llm.base_url else ""), file=sys.stderr)
        try:
            result = synthesize(documents, settings, llm, items=items,
                                cache=root.llm_cache, progress=progress)
        except LLMError as exc:
            raise RuntimeError(f"{exc}. Finished calls are kept in the LLM reply cache: run the "
                               "same command again to resume.") from exc
    data, rejects = write(result, args.output)
    print("\n".join(report(result, str(rejects))))
    if not result.kept:
        print(f"warning: no pair was kept, so {data} is empty and no run can use it",
              file=sys.stderr)
        return 1
    print(f"Wrote {len(result.kept)} questions to {data} and {len(result.rejected)} rejected "
          f"pairs to {rejects}. Evaluate with: ragdash run --dataset {data} --corpus "
          f"{args.corpus}")
    return 0
