#!/bin/sh
# confab models over the fake stores of fake_stores.sh: the table (one row
# per usable file, its path below), the notes on stderr about the files
# that cannot be used, --json, a machine with no models; -m NAME for chat,
# complete, tokenize, inspect, template and bench (and $CONFAB_MODEL);
# ambiguous, unknown and unusable names, each one error line.
bin=${CONFAB_BIN:?} shared=${CONFAB_SHARED:?}
[ -d "$shared/models" ] || { echo "no $shared/models: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/confab-models.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
sh "$(dirname "$0")/fake_stores.sh" "$tmp" "$shared/models" || { echo "fake stores failed"; exit 1; }
export HOME="$tmp/home" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state"
unset XDG_CACHE_HOME OLLAMA_MODELS HF_HOME HF_HUB_CACHE LLAMA_CACHE CONFAB_MODEL
out=$tmp/out err=$tmp/err

# ---- the table ----------------------------------------------------------------
"$bin" models >"$out" 2>"$err" || fail "models: exit status $?"
head -n 1 "$out" | grep -Eq '^NAME +ARCH +SIZE +QUANT +CONTEXT +STORE$' || fail "header: $(head -n 1 "$out")"
# row NAME ARCH QUANT CONTEXT STORE PATH (EREs): the row, and its path on the next line
row() {
    line=$(grep -E "^$1 " "$out") || { fail "no row for $1"; return; }
    printf '%s\n' "$line" | grep -Eq "^$1 +$2 +[0-9.]+ [kMG]?B +$3 +$4 +$5\$" || fail "row: '$line'"
    grep -A1 -E "^$1 " "$out" | tail -n 1 | grep -Eq "^    $6\$" ||
        fail "path of $1: $(grep -A1 -E "^$1 " "$out" | tail -n 1)"
}
row 'stories260K' llama F32 2048 confab "$tmp/data/confab/models/stories260K\.gguf"
row 'qwen3:0\.6b' qwen3 Q8_0 40960 ollama '~/\.ollama/models/blobs/sha256-[0-9a-f]{64}'
row 'someone/tiny:latest' llama F32 2048 ollama '~/\.ollama/models/blobs/sha256-[0-9a-f]{64}'
row 'hf\.co/bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0' llama Q8_0 8192 ollama '~/.*'
row 'Qwen/Qwen3-0\.6B-GGUF:Q4_K_M' qwen3 Q4_K_M 40960 hf \
    '~/\.cache/huggingface/hub/models--Qwen--Qwen3-0\.6B-GGUF/snapshots/5a6fd4ba[0-9a-f]+/Qwen3-0\.6B-Q4_K_M\.gguf'
row 'Qwen/Qwen3-0\.6B-GGUF:BF16' llama BF16 2048 hf '~/.*/snapshots/5a6fd4ba[0-9a-f]+/BF16/Qwen3-0\.6B-BF16\.gguf'
row 'someone/two-GGUF/two-Q8_0\.gguf' llama Q8_0 2048 hf '~/.*/two-Q8_0\.gguf'
row 'unsloth/gemma-3-1b-it-GGUF:Q8_0' gemma3 Q8_0 32768 'llama\.cpp' \
    '~/\.cache/llama\.cpp/unsloth_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q8_0\.gguf'
row 'my-model' olmo2 Q8_0 4096 'llama\.cpp' '~/\.cache/llama\.cpp/my-model\.gguf'
row 'lmstudio-community/Phi-3-mini-GGUF:Q8_0' phi3 Q8_0 4096 lmstudio \
    '~/\.lmstudio/models/lmstudio-community/Phi-3-mini-GGUF/Phi-3-mini-Q8_0\.gguf'
row 'TheBloke/Llama-2-7B-GGUF:Q8_0' llama Q8_0 4096 lmstudio \
    '~/\.cache/lm-studio/models/TheBloke/Llama-2-7B-GGUF/llama-2-7b\.Q8_0\.gguf'
[ "$(grep -c '^    ' "$out")" -eq 17 ] || fail "not 17 models listed: $(cat "$out")"
# one name in two stores: both listed, the hub's first
[ "$(grep -Ec '^bartowski/SmolLM2-135M-Instruct-GGUF:Q8_0 ' "$out")" -eq 2 ] &&
    grep -E '^bartowski/SmolLM2' "$out" | head -n 1 | grep -q ' hf$' || fail "a name in two stores"
# vision projectors and files the current snapshot replaces are not models
grep -q 'mmproj\|0d3e5c76.*Q8_0' "$out" && fail "an mmproj or replaced file is listed"
# the unusable files: one note each on stderr
[ "$(wc -l <"$err")" -eq 4 ] || fail "not 4 notes: $(cat "$err")"
grep -q "^confab: skipped broken (.*/broken\.gguf): truncated file" "$err" || fail "damaged file: $(cat "$err")"
grep -q "^confab: skipped big (.*/big-00001-of-00002\.gguf): split into 2 files" "$err" || fail "split file"
grep -q "^confab: skipped gone:latest (~/\.ollama/models/blobs/sha256-0*): its blob sha256-0*\.\.\. is missing" \
    "$err" || fail "missing blob: $(cat "$err")"
grep -q "^confab: skipped Qwen/Qwen3-0\.6B-GGUF:Q2_K (.*): it links to a file that is missing" "$err" ||
    fail "broken hub link"

# ---- --json -----------------------------------------------------------------------
"$bin" models --json >"$out" 2>"$err" || fail "--json: exit status $?"
[ -s "$err" ] && fail "--json: stderr: $(cat "$err")"
[ "$(grep -c '^  {"name": ' "$out")" -eq 21 ] || fail "--json: not 21 objects"
grep -qF "{\"name\": \"qwen3:0.6b\", \"file_name\": null, \"store\": \"ollama\", \"path\": \"$HOME/.ollama/models/blobs/sha256-" "$out" ||
    fail "--json: qwen3:0.6b"
grep -q '"name": "stories260K", "file_name": "stories260K.gguf", .*"size": 1185376, "arch": "llama", "quant": "F32", "context": 2048, "problem": null}' \
    "$out" || fail "--json: stories260K"
grep -q '"name": "broken", .*"arch": null, .*"problem": "truncated file' "$out" || fail "--json: the damaged file"

# ---- bad command lines ----------------------------------------------------------
# expect STATUS PATTERN CMD...: the exit status, and one line on stderr
expect() {
    want=$1 pat=$2
    shift 2
    "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    [ $rc -eq "$want" ] || fail "$*: exit status $rc, not $want"
    [ "$(wc -l <"$err")" -eq 1 ] && grep -Eq -- "$pat" "$err" || fail "$*: stderr: $(cat "$err")"
}
expect 2 "^confab: models takes no arguments: 'qwen3'" "$bin" models qwen3
expect 2 "^confab: unknown option '--frob' \(see confab models --help\)\$" "$bin" models --frob

# ---- -m NAME ------------------------------------------------------------------------
printf '/show model\nHi.\n' | "$bin" -t 1 -m qwen3:0.6b -n 4 >"$out" 2>"$err" || fail "chat -m qwen3:0.6b: $(cat "$err")"
grep -q "$HOME/.ollama/models/blobs/sha256-" "$err" || fail "chat -m qwen3:0.6b: not the blob: $(cat "$err")"
[ -s "$out" ] || fail "chat -m qwen3:0.6b: no reply"
"$bin" complete -t 1 -m Qwen/Qwen3-0.6B-GGUF -p "Once" -n 4 >"$out" 2>"$err" ||
    fail "complete -m org/repo: $(cat "$err")"
"$bin" tokenize -m someone/tiny -p "Hello" >"$out" 2>"$err" || fail "tokenize -m someone/tiny: $(cat "$err")"
"$bin" tokenize -m "$shared/models/stories260K-chatml.gguf" -p "Hello" >"$tmp/want" 2>&1
cmp -s "$out" "$tmp/want" || fail "tokenize -m someone/tiny differs from the file's tokens"
"$bin" inspect stories >"$out" 2>"$err" && head -n 1 "$out" | grep -q "^$tmp/data/confab/models/stories260K\.gguf: gguf v3" ||
    fail "inspect stories: $(head -n 1 "$out") $(cat "$err")"
"$bin" inspect qwen/qwen3-0.6b-gguf:q8_0 >"$out" 2>"$err" && head -n 1 "$out" | grep -q '/snapshots/5a6fd4ba.*/Qwen3-0\.6B-Q8_0\.gguf: ' ||
    fail "inspect qwen/qwen3-0.6b-gguf:q8_0: $(head -n 1 "$out") $(cat "$err")"
printf '[{"role": "user", "content": "Hi"}]' >"$tmp/msgs.json"
"$bin" template -m qwen3:0.6b --messages "$tmp/msgs.json" >"$out" 2>"$err" && grep -q '<|im_start|>user' "$out" ||
    fail "template -m qwen3:0.6b: $(cat "$err")"
"$bin" bench -m my-model -t 1 -p 8 -n 4 -r 1 --bw-mib 64 --json >"$out" 2>"$err" &&
    grep -q '"model": ' "$out" || fail "bench -m my-model: $(cat "$err")"
CONFAB_MODEL=lmstudio-community/Phi-3-mini-GGUF "$bin" -t 1 -p Hi -n 2 >"$out" 2>"$err" ||
    fail "CONFAB_MODEL=NAME: $(cat "$err")"

# ---- names that mean no one file ----------------------------------------------------
expect 3 "^confab: 'qwen3' could be any of qwen3:0\.6b, qwen3:1\.7b: give more of the name\$" "$bin" -m qwen3 -p x
expect 3 "^confab: 'q' could be any of .*, \.\.\.: give more" "$bin" inspect q
expect 3 "^confab: no model file or name 'qwen4'; close names: qwen3:0\.6b, qwen3:1\.7b \('confab models' lists all\)\$" \
    "$bin" inspect qwen4
# a slip in the first letters: the names that start so
expect 3 "^confab: no model file or name 'storis'; close names: stories260K \('confab models' lists all\)\$" \
    "$bin" -m storis -p x
expect 3 "^confab: no model file or name 'nothing-like-this' \('confab models' lists the models found\)\$" \
    "$bin" complete -m nothing-like-this -p x
expect 3 "^confab: gone:latest \(.*\): its blob sha256-0+\.\.\. is missing\$" "$bin" tokenize -m gone -p x
expect 3 "^confab: big \(.*\): split into 2 files" "$bin" -m big -p x
expect 3 "^confab: .*/broken\.gguf: truncated file" "$bin" -m broken -p x
expect 2 "^confab: no model file or name 'qwen4'" "$bin" bench -m qwen4
expect 3 "^confab: no model file or name 'qwen4'" "$bin" template -m qwen4 --messages "$tmp/msgs.json"
# a path stays a path: the loader's own message
expect 3 "^confab: cannot open '\./qwen3:0\.6b'" "$bin" inspect ./qwen3:0.6b

# ---- confab's folder, and nothing at all --------------------------------------------
# with no -m, the first file of confab's folder (a split one is not taken)
expect 3 "^confab: .*/broken\.gguf: truncated file" "$bin" -p x
rm "$tmp/data/confab/models/broken.gguf"
printf '/show model\n' | "$bin" -t 1 >"$out" 2>"$err" && grep -q "stories260K\.gguf" "$err" ||
    fail "no -m: not confab's folder's model: $(cat "$err")"
rm -r "$tmp/data/confab/models"
"$bin" -p x >"$out" 2>"$err" </dev/null
[ $? -eq 3 ] && grep -q "^confab: no model given" "$err" &&
    grep -q "^'confab models' lists the 16 models found in other programs' stores (-m NAME picks one)\.\$" "$err" ||
    fail "no model given: $(cat "$err")"
HOME=$tmp/empty "$bin" models >"$out" 2>"$err" || fail "an empty machine: exit status $?"
grep -q '^no models found; confab looks in:$' "$out" && grep -q '^  ollama     ~/\.ollama/models$' "$out" &&
    grep -q '^  hf         ~/\.cache/huggingface/hub$' "$out" &&
    grep -q '^  lmstudio   ~/\.lmstudio/models$' "$out" &&
    grep -q '^             ~/\.cache/lm-studio/models$' "$out" || fail "an empty machine: $(cat "$out")"

[ $fails -eq 0 ] && echo "models: ok" || echo "models: $fails failure(s)"
[ $fails -eq 0 ]
