"""Evidence found for you: relevant parts (the paper's §2.2) for a dataset that has only
questions, answers and a corpus.

Modules: `settings` (config `dataset.evidence`), `normalize` (answer forms, folded text),
`locate` (corpus units holding an answer), `rank` (BM25 + MiniLM score, the keep rule),
`finder` (`find_evidence`), `quotes` (the LLM-assisted variant), `output` (examples, issues,
JSONL dataset, agreement with gold parts), `review` (a person's decisions), `command`
(`ragdash evidence`). What ingest does when the parts column is missing is the stages' glue:
`ragdash.stages.evidence`.
Nothing heavy is imported here: `ragdash.config` reads `settings`.
"""
