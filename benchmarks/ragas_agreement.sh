#!/usr/bin/env bash
# The agreement of ragdash's RAGAS metrics with the real ragas, in one resumable command
# (docs/metrics.md#agreement-with-the-real-ragas):
#
#   bash benchmarks/ragas_agreement.sh [RESULTS_FOLDER]     # default /tmp/ragas-bench/r30
#
# One llama.cpp server of the bundled Qwen2.5 0.5B per side that still has answers to score
# (ragas's side, its own virtualenv RAGAS_PY, on port 8765; ragdash's on 8766), both at once so
# that the answers both sides scored grow together. The two cores are shared out: one thread
# each while both run, both for a side left alone (llama.cpp slows down badly when its threads
# outnumber the cores; a side that ends first leaves its core idle until the next start).
# No RAM prompt cache (it grew to 13.6 GB in 25 minutes). Each side
# appends one JSON line per answer and skips the answers done, so stopping this (Ctrl-C) and
# running it again goes on where it stopped; the table is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-/tmp/ragas-bench/r30}
RAGAS_PY=${RAGAS_PY:-/tmp/ragas-venv/bin/python}
PY=.venv/bin/python
MODEL=${MODEL:-models/qwen2.5-0.5b-instruct-q4_k_m.gguf}  # another GGUF: MODEL=… and a new folder
CORES=${CORES:-2}
export PYTHONPATH=$PWD
[ -x "$RAGAS_PY" ] || { echo "no ragas virtualenv at $RAGAS_PY (docs/metrics.md says how to make it)" >&2; exit 2; }
mkdir -p "$R"
[ -s "$R/inputs.jsonl" ] || "$PY" benchmarks/ragas_agreement.py inputs --out "$R"

left() {  # answers of inputs.jsonl not yet in the side's file $1
  "$PY" -c 'import sys; from benchmarks.ragas_agreement import done_ids, read_jsonl
from pathlib import Path
r = Path(sys.argv[1]); done = done_ids(r / sys.argv[2])
print(sum(str(x["id"]) not in done for x in read_jsonl(r / "inputs.jsonl")))' "$R" "$1"
}
sides=()
[ "$(left ragas.jsonl)" -gt 0 ] && sides+=(ragas)
[ "$(left ragdash.jsonl)" -gt 0 ] && sides+=(ragdash)
threads=$(( CORES / (${#sides[@]} > 0 ? ${#sides[@]} : 1) ))
threads=$(( threads > 0 ? threads : 1 ))

pids=()
stop() {  # a server busy with a reply can outlive a TERM: KILL after a second
  kill "${pids[@]}" 2>/dev/null || true; sleep 1; kill -9 "${pids[@]}" 2>/dev/null || true
}
trap stop EXIT INT TERM
serve() {  # port: a llama.cpp server of the model, waited for
  "$PY" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$1" --n_ctx 4096 \
    --n_threads "$threads" --model_alias qwen > "$R/server-$1.log" 2>&1 &
  pids+=($!)
  "$PY" -c 'import sys, time, urllib.request
for _ in range(240):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/v1/models", timeout=2)
        sys.exit(0)
    except OSError:
        time.sleep(0.5)
sys.exit(f"the llama.cpp server on port {sys.argv[1]} did not start")' "$1"
}
work=()
for side in "${sides[@]}"; do
  echo "$side: $(left "$side.jsonl") answers to score, $threads thread(s)"
  if [ "$side" = ragas ]; then
    serve 8765
    EMB=$("$PY" -c 'from ragdash.embeddings import model_path; print(model_path())')
    "$RAGAS_PY" benchmarks/ragas_runner.py --out "$R" --base-url http://127.0.0.1:8765/v1 \
      --embeddings "$EMB" >> "$R/ragas.log" 2>&1 &
  else
    serve 8766
    "$PY" benchmarks/ragas_agreement.py ragdash --out "$R" --base-url http://127.0.0.1:8766/v1 \
      >> "$R/ragdash.log" 2>&1 &
  fi
  pids+=($!)
  work+=($!)
done
[ ${#work[@]} -eq 0 ] || wait "${work[@]}"
"$PY" benchmarks/ragas_agreement.py compare --out "$R"
