"""Computations behind the dashboard and the HTML report (no streamlit): every function takes the
run's tables (pandas frames as stored in the run directory) and returns frames or plain values,
so the same numbers come out of the dashboard, the report and a notebook. Shares are fractions
in [0, 1] unless a name says `pct`. Import the topic module, e.g.
``from ragdash.analysis import curves``; this package re-exports nothing.

- `frames`: the run's tables reshaped: system order, the default budget, Score_IR at one budget,
  the questions × retrievers matrix, the primary answers/judgments, per-question and long
  tables, metadata columns and per-question dataset statistics.
- `curves`: a mean's interval over questions; Score_IR curves with their bands, the paper's
  Table 3.1 (§3.1), breakdowns by metadata, the best retriever, downsampling of sorted curves.
- `compare`: paired comparisons of two retrievers (or any two score columns): win/tie/loss,
  mean difference with its CI, Wilcoxon test, Holm adjustment, difference curves, the largest
  per-question differences.
- `matching`: where each relevant part lies in a context (evidence highlighting) and the chunks
  a retriever returned for a question.
- `judging`: judge-score distributions (the paper's Table 3.3, §3.2), LLM only vs RAG, errors,
  latency, tokens and cost.
- `judge_audit`: can the judge's scores be trusted? Four checks that need no second judge.
  (Asking the judge is `ragdash.llm.judge`; these two modules read what it said.)
- `thresholds`: the threshold panel (§3.3): sorted scores, fits and objective curves at one
  budget, estimated and actual shares for any (h, k), fit diagnosis, calibration summaries.
- `sentences`: the sentences pages and the report say about these figures, written from their
  numbers: the h/k rule's bias, the confusion matrix read, a paired test, an LLM figure's n.
- `system_means`: every signal's mean with its CI per system, each signal's order of
  the systems and Kendall's tau with the truth's.
- `reference`: each answer against the gold answers with no LLM (SQuAD exact match, token F1,
  contains a gold answer) and their means per system.
"""
