#!/usr/bin/env bash
# The agreement of ragdash's RAGAS metrics with the real ragas, in one resumable command
# (docs/metrics.md#agreement-with-the-real-ragas):
#
#   bash benchmarks/ragas_agreement.sh [RESULTS_FOLDER]     # default /tmp/ragas-bench/r30
#
# Two llama.cpp servers of the bundled Qwen2.5 0.5B, one thread each (two busy threads on two
# cores: llama.cpp slows down badly when its threads outnumber the cores), no RAM prompt cache
# (it grew to 13.6 GB in 25 minutes). ragdash's side asks port 8766, ragas's side (its own
# virtualenv, RAGAS_PY) port 8765, at once, so the answers both sides scored grow together.
# Each side appends one JSON line per answer and skips the answers done, so stopping this
# (Ctrl-C) and running it again goes on where it stopped; the table is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-/tmp/ragas-bench/r30}
RAGAS_PY=${RAGAS_PY:-/tmp/ragas-venv/bin/python}
PY=.venv/bin/python
MODEL=models/qwen2.5-0.5b-instruct-q4_k_m.gguf
export PYTHONPATH=$PWD
[ -x "$RAGAS_PY" ] || { echo "no ragas virtualenv at $RAGAS_PY (docs/metrics.md says how to make it)" >&2; exit 2; }
mkdir -p "$R"

pids=()
stop() { kill "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT INT TERM
for port in 8765 8766; do
  "$PY" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$port" --n_ctx 4096 \
    --n_threads 1 --model_alias qwen > "$R/server-$port.log" 2>&1 &
  pids+=($!)
done
"$PY" - <<'EOF'
import time, urllib.request
for port in (8765, 8766):
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        raise SystemExit(f"the llama.cpp server on port {port} did not start")
EOF

[ -s "$R/inputs.jsonl" ] || "$PY" benchmarks/ragas_agreement.py inputs --out "$R"
EMB=$("$PY" -c 'from ragdash.embeddings import model_path; print(model_path())')
"$PY" benchmarks/ragas_agreement.py ragdash --out "$R" --base-url http://127.0.0.1:8766/v1 \
  >> "$R/ragdash.log" 2>&1 &
pids+=($!)
"$RAGAS_PY" benchmarks/ragas_runner.py --out "$R" --base-url http://127.0.0.1:8765/v1 \
  --embeddings "$EMB" >> "$R/ragas.log" 2>&1 &
pids+=($!)
wait "${pids[2]}" "${pids[3]}"
"$PY" benchmarks/ragas_agreement.py compare --out "$R"
