"""Plotly figures of the dashboard and the HTML report: plain plotly, no streamlit. Every figure
has a title and labelled axes and uses the one colour per retriever of `colors`. Import the topic
module, e.g. ``from ragdash.viz import retrieval``; this package re-exports nothing.

- `colors`: one colour per retriever, judge score, class and relevant part; display names.
- `style`: the house style (template, title and subtitle, axis titles).
- `retrieval`: Score_IR curves, distributions, breakdowns, IR metrics, paired comparisons.
- `runs`: several runs: how each (run, retriever) is drawn, the leaderboard as a dot plot.
- `llm`: judge scores per system and budget (Table 3.3), RAG vs LLM only, latency, tokens.
- `calibration`: the threshold panel (§3.3: Figures 3.1 and 3.2, objective, confusion, shares),
  ROC and reliability of Score_IR against the judge, the estimators compared.
- `questions`: a dataset's relevant parts and metadata.
"""
