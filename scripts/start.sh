#!/usr/bin/env bash
# Sets everything up (idempotent) and starts the dashboard on the bundled sample.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/streamlit run app.py --server.headless true --browser.gatherUsageStats false "$@"
