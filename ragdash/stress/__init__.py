"""Controlled contexts: does the evidence in a context cause good answers? RGB's noise-robustness
and negative-rejection tests (Chen et al., AAAI 2024) built from a run's own chunks, whose
relevance is known, so the run's generator's accuracy is measured against the evidence put in
its context (`contexts`), beside what the run observed (`summary`)."""
