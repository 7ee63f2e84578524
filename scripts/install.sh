# Sourced by scripts/setup.sh and scripts/build_local_llm.sh. `pip_install ARGS...` installs into
# the virtualenv of $PY (default .venv/bin/python) with uv, installed into that virtualenv on first
# use: the same resolution as pip from the same sources, unpacked from uv's cache in parallel
# (about a tenth of pip's time). Falls back to pip where uv cannot be had or fails.
# uv does not read pip's configuration, so pip's find-links (where this machine keeps the CPU
# torch wheel) and constraint files are passed on to it.
pip_install() {
  local py=${PY:-.venv/bin/python}
  local uv
  uv="$(dirname "$py")/uv"
  [ -x "$uv" ] || "$py" -m pip install -q uv >/dev/null 2>&1 || true
  if [ -x "$uv" ]; then
    local opts=() links constraints entry
    links=${PIP_FIND_LINKS:-$("$py" -m pip config get global.find-links 2>/dev/null || true)}
    for entry in $links; do  # a missing folder, which pip skips with a warning, stops uv
      local path=${entry#file://}
      if [[ "$path" == *://* ]] || [ -e "$path" ]; then opts+=(--find-links "$entry"); fi
    done
    constraints=${PIP_CONSTRAINT:-$("$py" -m pip config get global.constraint 2>/dev/null || true)}
    for entry in $constraints; do [ -f "$entry" ] && opts+=(--constraint "$entry"); done
    if "$uv" pip install -q --python "$py" "${opts[@]}" "$@"; then
      return 0
    fi
    echo "[setup] uv could not install $*: trying pip" >&2
  fi
  "$py" -m pip install -q "$@"
}
