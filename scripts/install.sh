# Sourced by scripts/setup.sh and scripts/build_local_llm.sh. `pip_install ARGS...` installs into
# the virtualenv of $PY (default .venv/bin/python) with uv, installed into that virtualenv on first
# use: the same resolution as pip from the same sources, unpacked from uv's cache in parallel
# (about a tenth of pip's time). Falls back to pip where uv cannot be had or fails.
# uv does not read pip's configuration, so pip's find-links (where this machine keeps the CPU
# torch wheel) and constraint files are passed on to it: as `pip config list` gives them, from
# every configuration file and PIP_ variable (`pip config get` reads only one file).
pip_install() {
  local py=${PY:-.venv/bin/python}
  local uv
  uv="$(dirname "$py")/uv"
  [ -x "$uv" ] || "$py" -m pip install -q uv >/dev/null 2>&1 || true
  if [ -x "$uv" ]; then
    [ -n "${_UV_SOURCES_READ:-}" ] || _uv_sources "$py"
    if "$uv" pip install -q --python "$py" "${_UV_SOURCES[@]}" "$@"; then
      return 0
    fi
    echo "[setup] uv could not install $*: trying pip" >&2
  fi
  "$py" -m pip install -q "$@"
}

# pip's find-links and constraint files as uv options in _UV_SOURCES, read once per shell (each
# `pip config list` starts Python: about 0.3 s).
_uv_sources() {
  local config entry path
  _UV_SOURCES=()
  config=$("$1" -m pip config list 2>/dev/null || true)
  for entry in $(_pip_setting "$config" find-links); do
    path=${entry#file://}  # a missing folder, which pip skips with a warning, stops uv
    if [[ "$path" == *://* ]] || [ -e "$path" ]; then _UV_SOURCES+=(--find-links "$entry"); fi
  done
  for entry in $(_pip_setting "$config" constraint); do
    [ -f "$entry" ] && _UV_SOURCES+=(--constraint "$entry")
  done
  _UV_SOURCES_READ=1
}

# The value pip uses for option $2 in `pip config list` output $1: the last of the global and
# install sections and the PIP_ variables (listed after the files, as they override them).
_pip_setting() {
  printf '%s\n' "$1" | sed -n "s/^\(global\|install\|:env:\)\.$2='\(.*\)'\$/\2/p" | tail -1
}
