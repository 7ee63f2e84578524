#!/usr/bin/env bash
# Creates .venv/ in the project root and installs everything ragdash needs, offline-capable.
# Idempotent: a second run with unchanged requirements only checks a stamp (a second or two).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv"
  "$PYTHON" -m venv .venv  # its own pip is enough: uv installs the packages
fi

# Packages go in with uv (scripts/install.sh): the same resolution as pip from the same sources,
# in about a tenth of the time (a clean clone's setup was about 2.5 minutes, nearly all of it pip).
source scripts/install.sh

stamp=.venv/.ragdash-requirements
want=$(cat requirements.txt requirements-dev.txt requirements-ray.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[setup] installing Python packages (torch==2.13.0 CPU first)"
  pip_install torch==2.13.0
  pip_install -r requirements-dev.txt
  pip_install --no-deps -e .
  echo "$want" > "$stamp"
fi

# The project's bytecode compiled once (pip does the same for the packages it installs): where
# PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile ragdash from source
# again (about 0.5 CPU-s per process: the dashboard, each job, each CLI call).
.venv/bin/python -m compileall -q ragdash app_pages app.py >/dev/null

# The scoring kernels compiled once into numba's on-disk cache (ragdash/scoring/__pycache__):
# every later process loads them instead of compiling them (about 7 CPU-s each). On the second
# core while the local LLMs are set up: both take about 7 s on a clean clone.
.venv/bin/python -c "from ragdash.scoring import warm; warm()" &
warming=$!

# The local LLM (llama.cpp server + Qwen2.5 0.5B GGUF): built once, about 4 minutes.
if [ -f scripts/build_local_llm.sh ]; then
  bash scripts/build_local_llm.sh .venv/bin/python
fi
wait "$warming"  # its failure fails the setup
echo "[setup] ready"
