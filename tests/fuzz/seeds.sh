#!/bin/sh
# seeds.sh CONFAB SEEDGEN SRC OUT STAMP: the fuzzers' seed corpora, made
# from the shared fixtures (${CONFAB_SHARED:-SRC/../shared}) into OUT/NAME,
# one folder per harness; touches STAMP when done.  Nothing of ../shared is
# copied into the repository: this runs at build time.
set -e
bin=$1 gen=$2 src=$3 out=$4 stamp=$(cd "$(dirname "$5")" && pwd)/${5##*/}
shared=${CONFAB_SHARED:-$src/../shared}
rm -rf "$out"
for h in gguf llama2c tokenizer jinja json session config slash stream serve markdown tools; do mkdir -p "$out/$h"; done

# what a server sends a chat (a byte seeding the cut into reads, then the
# bytes) and what a client sends confab serve: from the repository
for f in "$src"/tests/remote/streams/*.sse; do
    { printf 'A'; cat "$f"; } >"$out/stream/${f##*/}"
done
printf '%s' 'B{"object":"list","data":[{"id":"qwen3:0.6b","object":"model"},{"id":"m2"}]}' >"$out/stream/models"
printf '%s' 'C{"error":{"message":"model not found","type":"invalid_request_error","code":404}}' >"$out/stream/error"
post() { # name body
    printf 'POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer k\r\nContent-Length: %d\r\n\r\n%s' \
        "$(printf '%s' "$2" | wc -c)" "$2" >"$out/serve/$1"
}
post plain '{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"stream":true,"stream_options":{"include_usage":true}}'
post settings '{"messages":[{"role":"developer","content":null},{"role":"assistant","content":"a","reasoning_content":"r"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"\u00e9"}]}],"temperature":0.7,"top_k":40,"top_p":0.9,"min_p":0.05,"typical_p":1,"max_tokens":64,"n_predict":3,"seed":-1,"repetition_penalty":1.1,"repeat_last_n":64,"presence_penalty":0.5,"frequency_penalty":-0.5,"stop":["\n\n","END"],"reasoning_effort":"low","chat_template_kwargs":{"enable_thinking":false}}'
printf 'GET /v1/models HTTP/1.0\nHost: h\n\n' >"$out/serve/models"
printf 'POST /chat/completions HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}' >"$out/serve/expect"
# tool calls: the regression inputs (a format byte, then a reply) seed it
cp "$src"/tests/fuzz/regress/tools/* "$out/tools/"
# replies in markdown (a byte for the width and cuts, then the text)
{ printf 'P'; head -c 12000 "$src/README.md"; } >"$out/markdown/readme"
printf '%s\n' '# Title' '' 'Some **bold**, *it*, ~~gone~~ and `code`.' '' '> quoted' '> - item' '' \
    '1. one' '   - two' '' '---' '' '| a | b |' '|:--|--:|' '| é | 12 |' '' '```python' 'def f(x):' \
    '    return "s"  # c' '```' '' '```' 'open' >"$out/markdown/mixed"
printf '\001**a *b _c ~~d `e' >"$out/markdown/unclosed"

if [ ! -r "$shared/README.md" ]; then
    echo "seeds.sh: no shared fixtures at $shared: the seed corpora made from them stay empty" >&2
    touch "$stamp"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# confab, its chatter dropped unless it fails
run() {
    "$@" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
}
export HOME="$tmp" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state"

# tiny models of every architecture mkmodel writes, in a few types; the
# vocabularies seedgen writes keep them at a few KB
"$gen" "$out" "$shared/models/tok512.bin"
mv "$out"/tiny-*.gguf "$tmp/"
for spec in "llama:" "llama:kv_heads=1,tied=1" "llama:experts=4,experts_used=2,expert_ff=32" \
    "qwen2:" "qwen3:" "gemma3:swa=4" "smollm3:layers=4" "olmo2:" "granite:" \
    "qwen3moe:experts=4,experts_used=2,expert_ff=32" \
    "gpt-oss:experts=4,experts_used=2,expert_ff=32,swa=4,yarn_factor=4,yarn_orig_ctx=16" \
    "qwen35:layers=4,ssm_conv=4,ssm_state=32,ssm_k_heads=2,ssm_v_heads=2" \
    "gemma4:layers=2,swa=4,swa_period=2,ple=8"; do
    arch=${spec%%:*} extra=${spec#*:}
    for type in F32 Q8_0; do
        vocab=spm embd=32
        [ "$type" = Q8_0 ] && vocab=bpe embd=32
        name=$arch-$(echo "$extra" | tr -c 'a-z0-9\n' '-' | cut -c1-24)-$type.gguf
        run "$bin" mkmodel --dims "arch=$arch,embd=$embd,layers=1,heads=2,ff=32,ctx=64${extra:+,$extra}" \
            --type $type -t 1 --vocab "$tmp/tiny-$vocab.gguf" -o "$out/gguf/$name"
    done
done
# each block type: ffn_down's rows (ff) fit K-quants' 256
for type in Q4_0 Q4_1 Q5_0 Q5_1 Q6_K F16 BF16 IQ4_NL MXFP4 TQ2_0; do
    run "$bin" mkmodel --dims "arch=llama,embd=32,layers=1,heads=2,ff=256,ctx=64,tied=1" --type $type \
        --pure -t 1 --vocab "$tmp/tiny-spm.gguf" -o "$out/gguf/llama-$type.gguf"
done

# fuzz_gguf's findings (what the ordinary build replays, regress_gguf.sh)
"$gen" regress "$out/gguf" "$out/gguf/llama--Q8_0.gguf" "$out/gguf/llama-TQ2_0.gguf" \
    "$out/gguf/gpt-oss-experts-4-experts-used-2-Q8_0.gguf" "$out/gguf/gemma4-layers-2-swa-4-swa-perio-Q8_0.gguf"

# the tokenizer harness: a byte choosing the vocabulary, a byte of flags,
# a text of llama.cpp's test vectors
n=0
for inp in "$shared"/vocab/*.gguf.inp; do
    awk -v dir="$out/tokenizer" -v n=$n 'BEGIN { RS = "\n__ggml_vocab_test__\n" }
        NR % 4 == 1 { printf "%c%c%s", 1 + (n * 7 + NR) % 64, 64 + NR % 64, $0 > (dir "/" n "-" NR) }' "$inp"
    n=$((n + 1))
done

# templates and their data
cp "$shared"/templates/*.jinja "$out/jinja/"
for f in "$shared"/templates/2026/*.jinja; do cp "$f" "$out/jinja/2026-${f##*/}"; done
for f in "$shared"/templates/*.json "$shared"/templates/2026/*.json "$src"/tests/template/*.json; do
    cp "$f" "$out/json/$(echo "$f" | tr '/' '_')"
done

# sessions of the chat model fuzz_session and fuzz_slash use
model=$shared/models/stories260K-chatml.gguf
cd "$tmp"
printf '/save s0\nHi.\n/save s1\nTell me a story.\n/set temp 0.3\n/save s2\nMore.\nAnd?\n/save s3\n' |
    "$bin" -m "$model" -c 128 -n 8 -t 1 --seed 1 --system "Be kind." >/dev/null 2>&1
printf 'Hi.\n/set thinking off\n/set reasoning-effort low\n/undo\n/save s4\n' |
    "$bin" -m "$model" -c 96 --kv-type f32 -n 4 -t 1 --seed 2 >/dev/null 2>&1
cp s0 s1 s2 s3 s4 "$out/session/"
cp "$src/tests/session/v1.session" "$out/session/"

# config files and chat input
cfg=$out/config
printf 'temp = 0.7\ntop-k = 20\n# a comment\nsystem = "  Be brief.  "\nkv-type = f16\n' >"$cfg/plain"
printf 'model = %s\nctx-size = 256\nthreads = 2\nmmap = yes\nautosave = on\nshow-thinking = 1\n' \
    "$model" >"$cfg/model"
printf 'tmep = 1\nno equals sign\nn-predict = x\n--temp\n0.5\n-n\n3\n--kv-type=f32\n' >"$cfg/errors"
sl=$out/slash
printf 'Hello.\n/undo\nHi again.\n/regen\n/show context\n/show stats\n' >"$sl/turns"
printf '/set temp 0\n/set top-k 5\n/set n-predict 2\n/show settings\n/set system Be kind.\n/set\n' >"$sl/settings"
printf '/set parameter temperature 0\n/set top_k 3\n/set nothink\n/set think\n/set parameter num_ctx 9\n/show system\n/show parameters\n/show info\n' >"$sl/aliases"
printf '"""\nA message\nof lines\n"""\nline one \\\nline two\n/show prompt Hi\n' >"$sl/blocks"
printf '/save a.session\nOne.\nTwo.\n/load a.session\n/save\n/clear\n/help set\n/bye\n' >"$sl/save-load"
printf 'Tell me a long story about a cat and a dog and a bird.\nMore.\nMore!\nAgain.\n' >"$sl/shift"
touch "$stamp"
