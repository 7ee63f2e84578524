"""Robustness tests of a generator, outside the retrieval pipeline: RGB's counterfactual
robustness (Chen et al., AAAI 2024), `ragdash.robustness.counterfactual`."""
