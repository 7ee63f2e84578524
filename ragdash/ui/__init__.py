"""Dashboard helpers for the Streamlit pages: `state` (runs, cached tables), `widgets` (pickers,
charts, headers), `jobs` (background pipeline runs) and `evidence` (highlighted contexts). The
figures themselves are `ragdash.viz`, the numbers `ragdash.analysis`."""
