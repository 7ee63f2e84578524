#!/usr/bin/env bash
# Sets up (idempotent), then runs the whole test suite, slow end-to-end tests included.
# Extra arguments go to pytest (e.g. -m "not slow" for a quick pass).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Browser tests drive Debian's chromium (never `playwright install`).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "[test] installing Debian chromium for browser tests"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
      >/dev/null 2>&1 || echo "[test] chromium could not be installed: browser tests will skip"
  else
    echo "[test] chromium missing and not root: browser tests will skip"
  fi
fi
# both cores: one test file per worker (module-scoped servers stay in one process)
exec .venv/bin/python -m pytest -q -n 2 --dist loadfile "$@"
