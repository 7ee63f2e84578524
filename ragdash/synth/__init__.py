"""Synthetic test sets from a corpus alone: questions, answers and verbatim relevant parts (the
paper's §2.2 triples) written by an LLM and checked against the documents.

Modules: `settings` (what to generate, the documented thresholds), `sample` (chunks across
documents, stratified), `reply` (reading the model's reply), `verify` (span verbatim in the
document, answer in the span), `dedup` (near-duplicate questions), `records` (attempts, reasons,
acceptance), `synthesize` (the steps, LLM calls, leakage check), `estimate` (cost before any
call), `write` (the generic JSONL dataset and the rejects), `command` (`ragdash synth`).
The prompts live in `ragdash.llm.prompts`. Nothing heavy is imported here.
"""
