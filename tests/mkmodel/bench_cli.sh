#!/bin/sh
# confab mkmodel and confab bench from the command line: a tiny custom
# shape is written, benchmarked with --json (every key present), and bad
# options are refused with the usage exit code.
bin=${CONFAB_BIN:?} shared=${CONFAB_SHARED:?}
[ -d "$shared/models" ] || exit 77
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$bin" mkmodel --dims embd=128,layers=2,heads=4,kv_heads=2,ff=256 --type Q8_0 \
    --vocab "$shared/models/stories260K.gguf" -o "$tmp/m.gguf" 2>"$tmp/err" ||
    fail "mkmodel: $(cat "$tmp/err")"
"$bin" inspect "$tmp/m.gguf" | grep -q "blk.1.ffn_down.weight *Q8_0 *256 x 128" ||
    fail "mkmodel: blk.1.ffn_down.weight is not Q8_0 256 x 128"

out=$("$bin" bench -m "$tmp/m.gguf" -t 2 -p 8 -n 4 -r 1 --bw-mib 64 --json 2>&1) ||
    fail "bench --json: $out"
for key in model threads pp_tps tg_tps bandwidth_gbs bytes_per_token roofline_fraction \
    run_roofline_fraction run_roofline_fraction_sd run_bandwidth_gbs_min run_bandwidth_gbs_max \
    peak_rss_bytes; do
    printf '%s\n' "$out" | grep -q "\"$key\": " || fail "bench --json has no \"$key\": $out"
done
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "bench --json printed more than one line"
printf '%s\n' "$out" | grep -q '"threads": 2,' || fail "bench --json: threads is not 2"

out=$("$bin" bench -m "$tmp/m.gguf" -t 1 -p 8 -n 4 -r 2 --bw-mib 64 --ctx-sweep 2>&1) ||
    fail "bench --ctx-sweep: $out"
for test in pp8 "tg4 @ d0" "tg4 @ d1024" "tg4 @ d4096"; do
    printf '%s\n' "$out" | grep -q "| *$test |" || fail "bench table has no $test row: $out"
done
printf '%s\n' "$out" | grep -q "^memory read bandwidth: [0-9.]* GB/s" || fail "no bandwidth line"
printf '%s\n' "$out" |
    grep -q "^each run against a probe just before it (.* GB/s): .* at depth 0, .* at 1024, .* at 4096$" ||
    fail "no line of each run against its probe: $out"
printf '%s\n' "$out" | grep -q "^peak RSS: " || fail "no peak RSS line"

# a probe that cannot have its buffer: bench says so and gives no roofline
# (tried only where the kernel refuses a mapping larger than the machine:
# overcommit mode 0, below 1 TiB of memory)
if [ "$(cat /proc/sys/vm/overcommit_memory 2>/dev/null)" = 0 ] &&
    [ "$(awk '/^MemTotal/ {print $2}' /proc/meminfo)" -lt 1000000000 ]; then
    out=$("$bin" bench -m "$tmp/m.gguf" -t 1 -p 0 -n 2 -r 1 --bw-mib 1048576 2>&1) ||
        fail "bench without a probe buffer: $out"
    printf '%s\n' "$out" |
        grep -q "^memory read bandwidth: not measured (no 1048576 MiB buffer to read), so no roofline$" ||
        fail "bench without a probe buffer does not say so: $out"
    printf '%s\n' "$out" | grep -q "t/s; tg2 reaches" && fail "bench without a probe buffer gives a roofline: $out"
fi

# the load modes: bench says how the weights came into memory
out=$("$bin" bench -m "$tmp/m.gguf" -t 1 -p 0 -n 2 -r 1 --bw-mib 64 --mmap --json 2>&1)
printf '%s\n' "$out" | grep -q '"weights": "mapped"' || fail "bench --mmap: $out"
out=$("$bin" bench -m "$tmp/m.gguf" -t 1 -p 0 -n 2 -r 1 --bw-mib 64 --no-mmap 2>&1)
printf '%s\n' "$out" | grep -q "^weights: copied into memory" || fail "bench --no-mmap: $out"

"$bin" mkmodel --shape nope --type Q8_0 -o "$tmp/x.gguf" 2>/dev/null
[ $? -eq 2 ] || fail "mkmodel --shape nope: exit status is not 2"
# each shape's default vocabulary, named when it is missing
for sv in qwen3-4b:models/qwen3-bpe.Q8_0.gguf gemma3-1b:vocab/ggml-vocab-gemma3.gguf \
    smollm3-3b:vocab/ggml-vocab-llama-bpe.gguf llama-1b:vocab/ggml-vocab-llama-spm.gguf; do
    CONFAB_SHARED="$tmp/none" "$bin" mkmodel --shape "${sv%%:*}" --type Q8_0 -o "$tmp/x.gguf" \
        2>"$tmp/err"
    [ $? -eq 1 ] && grep -q "$tmp/none/${sv#*:}.*CONFAB_SHARED" "$tmp/err" ||
        fail "mkmodel --shape ${sv%%:*} without its vocabulary: $(cat "$tmp/err")"
done
"$bin" mkmodel --dims embd=128 --type Q3_K -o "$tmp/x.gguf" 2>/dev/null
[ $? -eq 2 ] || fail "mkmodel --type Q3_K: exit status is not 2"
"$bin" bench -m "$tmp/m.gguf" --kv-type q8 2>/dev/null
[ $? -eq 2 ] || fail "bench --kv-type q8: exit status is not 2"
"$bin" bench -m "$tmp/m.gguf" -t 1 --chat-turns 2 >/dev/null 2>&1 ||
    fail "bench --chat-turns: exit status $?"

[ $fails -eq 0 ] && echo "bench-cli: ok"
exit $((fails > 0))
