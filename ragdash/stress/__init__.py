"""RGB's tests of a generator (Chen et al., AAAI 2024, "Benchmarking Large Language Models in
Retrieval-Augmented Generation"), in one package:

- controlled contexts, the `stress` stage (`ragdash stress`): noise robustness, negative
  rejection and information integration, built from a run's own chunks, whose relevance is
  known, so the run's generator's accuracy is measured against the evidence put in its
  context (`settings`, `contexts`), beside what the run observed (`summary`);
- counterfactual robustness (`ragdash counterfactual`), outside the retrieval pipeline: RGB's
  own passages rewritten with a false answer (`counterfactual`; RGB's LLM check of a reply,
  `counterfactual_check`; the rates and the files written, `counterfactual_summary`).
"""
