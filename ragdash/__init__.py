"""ragdash: evaluate Retrieval-Augmented Generation with token-budget retrieval scores."""

__version__ = "0.1.0"
