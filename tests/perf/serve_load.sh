#!/bin/sh
# Aggregate tokens/s and per-request latency of confab serve at 1, 2, 4 and
# 8 concurrent clients, with --parallel 1 and --parallel N, on one model:
#   tests/perf/serve_load.sh [MODEL.gguf [N [THREADS]]]
# Without a model, a random-weight smollm2-135m Q8_0 is made in /tmp by
# confab mkmodel.  Each client sends REQUESTS (2) greedy completions of
# MAX_TOKENS (32) tokens, one after another.  Besides the speeds, the
# server's CPU time a token (its utime + stime over the run), which a
# loaded machine disturbs less than the wall clock.  Needs node (for fetch).
# (A benchmark, not a test: meson test -C build --benchmark serve-load.)
set -eu
bin=${CONFAB_BIN:-build/confab}
model=${1:-}
n=${2:-4}
threads=${3:-2}
export REQUESTS=${REQUESTS:-2} MAX_TOKENS=${MAX_TOKENS:-32}
command -v node >/dev/null 2>&1 || { echo "skipped: no node"; exit 77; }
if [ -z "$model" ]; then
    model=/tmp/confab-serve-load-smollm2-135m.Q8_0.gguf
    [ -f "$model" ] || "$bin" mkmodel --shape smollm2-135m --type Q8_0 -o "$model" >/dev/null
fi
here=$(dirname "$0")
echo "model $model, -t $threads, $MAX_TOKENS tokens a request, $REQUESTS requests a client"
echo "parallel clients tokens wall_ms tok/s vs_1_client mean_ms slowest_ms cpu_ms/tok"
# the server's CPU time so far, in ms
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) * 1000 / hz }' "/proc/$1/stat"; }
for p in 1 "$n"; do
    log=$(mktemp /tmp/confab-load-XXXXXX)
    "$bin" serve -m "$model" --port 0 -t "$threads" -np "$p" -c $((1024 * p)) 2>"$log" &
    pid=$!
    port=
    for _ in $(seq 300); do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/v1.*|\1|p' "$log")
        [ -n "$port" ] && break
        sleep 0.1
    done
    [ -n "$port" ] || { cat "$log"; kill "$pid"; exit 1; }
    one=
    for c in 1 2 4 8; do
        cpu0=$(cpu_ms "$pid")
        line=$(CONFAB_URL="http://127.0.0.1:$port/v1" CLIENTS=$c node "$here/serve_load.cjs")
        cpu1=$(cpu_ms "$pid")
        rate=$(echo "$line" | cut -d' ' -f4)
        [ -n "$one" ] || one=$rate
        echo "$p $line" | awk -v r="$rate" -v o="$one" -v c="$cpu0" -v d="$cpu1" \
            '{ printf "%8d %7d %6d %7d %6.1f %11.2f %7d %10d %10.1f\n", $1, $2, $3, $4, r, r / o, $6, $7, (d - c) / $3 }'
    done
    kill "$pid"
    wait "$pid" || true
    grep "tokens decoded in" "$log" || true
    rm -f "$log"
done
