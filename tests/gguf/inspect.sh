#!/bin/sh
# confab inspect on every shared model: tensor counts, types and shapes as
# ../shared/refs/README.md describes the files.
bin=${CONFAB_BIN:?} models=${CONFAB_SHARED:?}/models
[ -d "$models" ] || exit 77
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect FILE "TYPE=COUNT ..." "NAME SHAPE" ...
expect() {
    file=$1 counts=$2
    shift 2
    out=$("$bin" inspect "$models/$file" 2>&1) || { fail "$file: $out"; return; }
    for tc in $counts; do
        type=${tc%=*} want=${tc#*=}
        got=$(printf '%s\n' "$out" | awk -v t="$type" '$1 ~ /^[0-9]+$/ && $3 == t' | wc -l)
        [ "$got" -eq "$want" ] || fail "$file: $got tensors of type $type, expected $want"
    done
    total=0
    for tc in $counts; do total=$((total + ${tc#*=})); done
    printf '%s\n' "$out" | grep -q "^tensors: $total\$" || fail "$file: tensor count is not $total"
    for spec in "$@"; do
        name=${spec%% *} shape=${spec#* }
        printf '%s\n' "$out" | awk -v n="$name" '$2 == n { $1 = $2 = $3 = ""; print }' |
            grep -q "^ *$shape  *[0-9]" || fail "$file: $name does not have shape $shape"
    done
}

for t in Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K F16 BF16; do
    expect quant-$t.gguf "$t=16 F32=5" "token_embd.weight 256 x 512" "output.weight 256 x 512" \
        "blk.1.ffn_down.weight 768 x 256" "blk.0.attn_k.weight 256 x 64"
done
expect quant-F32.gguf "F32=21" "blk.0.ffn_up.weight 256 x 768"
expect quant-Q4_K_M.gguf "Q4_K=13 Q6_K=3 F32=5"
expect llama-spm.Q8_0.gguf "Q8_0=15 F32=5" "token_embd.weight 128 x 32000"
expect gpt2.F16.gguf "F16=10 F32=19" "position_embd.weight 128 x 1024" "blk.0.attn_qkv.weight 128 x 384" \
    "blk.0.attn_qkv.bias 384"
expect phi3.Q8_0.gguf "Q8_0=10 F32=5" "blk.0.attn_qkv.weight 128 x 384" "blk.1.ffn_up.weight 128 x 768"
expect qwen2-shape.Q8_0.gguf "Q8_0=16 F32=11" "blk.0.attn_q.bias 128"
expect llama-bpe.Q8_0.gguf "Q8_0=15 F32=5" "token_embd.weight 128 x 128256"
expect qwen2.Q8_0.gguf "Q8_0=15 F32=11" "token_embd.weight 128 x 151936"
for f in stories260K stories260K-chatml stories260K-llama2chat; do
    expect $f.gguf "F32=48" "token_embd.weight 64 x 512" "blk.4.ffn_down.weight 172 x 64"
done
expect stories260K.bin "F32=47" "token_embd.weight 64 x 512" "blk.4.ffn_down.weight 172 x 64"

# metadata is shown, long arrays summarised
"$bin" inspect "$models/llama-spm.Q8_0.gguf" | grep -q "tokenizer.ggml.tokens .*\[str; 32000\] .*31992 more" ||
    fail "token array not summarised"
"$bin" inspect "$models/stories260K.bin" | grep -q "general.architecture .*'llama'" || fail "llama2c metadata"
"$bin" inspect "$models/qwen3.Q4_K_M.gguf" | grep -q "general.file_type .* = 15 (Q4_K_M)$" ||
    fail "general.file_type not named"

# the summary: parameters, the quant types' shares, the template, whether confab runs it
out=$("$bin" inspect "$models/qwen3.Q4_K_M.gguf")
printf '%s\n' "$out" | grep -q "^  model      qwen3 'confab-fixture-qwen3', 3\.2M parameters, 3 layers, context 40960$" &&
    printf '%s\n' "$out" | grep -q "^  weights    Q4_K 83%, Q6_K 17%, F32 0\.5%$" &&
    printf '%s\n' "$out" | grep -q "^  template   none (a chat uses the chatml built-in" &&
    printf '%s\n' "$out" | grep -q "^  confab     runs it (confab -m $models/qwen3\.Q4_K_M\.gguf)$" ||
    fail "summary of qwen3.Q4_K_M: $(printf '%s\n' "$out" | sed -n '/^summary/,$p')"
"$bin" inspect "$models/stories260K-chatml.gguf" | grep -q "^  template   Jinja, 209 bytes (chatml format)$" ||
    fail "summary: the GGUF's template"
tmp=$(mktemp -d)
printf 'GGUF\003\000\000\000\000\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000\024\000\000\000\000\000\000\000general.architecture\010\000\000\000\005\000\000\000\000\000\000\000mamba' >"$tmp/mamba.gguf"
"$bin" inspect "$tmp/mamba.gguf" | grep -q "^  confab     cannot run it: .*architecture 'mamba' is not supported; confab runs llama" ||
    fail "summary of an architecture confab does not run: $("$bin" inspect "$tmp/mamba.gguf" | tail -4)"
rm -rf "$tmp"

# bad files: one error line, exit 3
tmp=$(mktemp -d)
printf 'GGUF\003\000\000\000' >"$tmp/short.gguf"
msg=$("$bin" inspect "$tmp/short.gguf" 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] && printf '%s' "$msg" | grep -q "truncated" ||
    fail "short file: rc $rc, '$msg'"
head -c 100 "$models/stories260K.gguf" | sed 's/GGUF/GGUX/' >"$tmp/magic.gguf"
"$bin" inspect "$tmp/magic.gguf" 2>&1 | grep -q "bad magic" || fail "bad magic not reported"
"$bin" inspect "$tmp/missing.gguf" 2>&1 | grep -q "cannot open" || fail "missing file"
rm -rf "$tmp"

[ $fails -eq 0 ] && echo "inspect: all models as described" || exit 1
