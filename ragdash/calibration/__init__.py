"""Implementation of `ragdash.calibrate` (import the public API from there)."""
