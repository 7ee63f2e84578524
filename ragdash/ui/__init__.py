"""Dashboard helpers. `colors`, `charts` and `evidence` are plain Python (the HTML report uses
them too); `state` and `widgets` import streamlit and are for pages only."""
