#!/usr/bin/env bash
# Sets up (idempotent), then runs the whole test suite, slow end-to-end tests included.
# Extra arguments go to pytest (e.g. -m "not slow" for a quick pass).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Browser tests drive Debian's chromium-headless-shell (never `playwright install`): the old
# headless mode without the browser's UI layers, about a tenth less CPU than `chromium`.
has_browser() { command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1; }
if ! command -v chromium-headless-shell >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "[test] installing Debian chromium-headless-shell for browser tests"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      chromium-headless-shell) >/dev/null 2>&1 || echo "[test] chromium-headless-shell could not be installed"
  else
    echo "[test] chromium-headless-shell missing and not root"
  fi
  if ! has_browser; then
    if [ "${CI:-}" = true ]; then
      echo "[test] CI=true needs chromium for the browser tests: stopping" >&2
      exit 1
    fi
    echo "[test] browser tests will skip (they fail when CI=true)"
  fi
fi
# The suite starts hundreds of Python processes (servers, jobs, CLI calls, indexers): let them
# keep the bytecode they compile (tests' assertion rewriting included), whatever the shell says
unset PYTHONDONTWRITEBYTECODE
# both cores, one test file per worker: a worker's browser tests share one server and
# Chromium (tests/browser/conftest.py), and a module's fixtures are built once. Files go out
# heaviest first (tests/conftest.py): --no-loadscope-reorder keeps that order, which xdist
# otherwise replaces by the number of tests in each file (a two-test file of 40 s came last)
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder \
  --durations=30 "$@"
