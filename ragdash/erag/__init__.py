"""eRAG: retrieval judged by what the downstream LLM makes of each retrieved chunk alone.

Salemi & Zamani (SIGIR 2024), "Evaluating Retrieval Quality in Retrieval-Augmented
Generation": for each question and each chunk a retriever ranked within the top k, the LLM is
given the question and that chunk alone; its output, scored against the gold answers with a
downstream metric, is the chunk's relevance label, and the labels in rank order are aggregated
with IR measures (precision, MAP, MRR, nDCG, hit at k) per (question, retriever). It costs up to
k LLM calls per question and retriever, where ragdash's Score_IR costs none.

- `settings`: the `erag` section of the run specification (`ERAGSpec`).
- `calls`: the chunks to judge and their calls, as data (what a run sends and a dry run
  prices).
- `evaluate`: the calls through the LLM layer, the labels and the per-(question, retriever)
  table.
- `measures`: the IR measures of a list of labels (pure functions).
- `summary`: per-retriever means and per-question values for the dashboard.
"""
