#!/bin/sh
# confab tokenize: ids as llama.cpp gives them (shared/refs), the per-token
# format, --no-bos, --special, -f, the llama2.c checkpoint, and errors.
bin=${CONFAB_BIN:?} models=${CONFAB_SHARED:?}/models
[ -d "$models" ] || exit 77
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
same() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }

story="Once upon a time, there was a little girl named Lily. She loved to play"
want="[1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337]"
same "$("$bin" tokenize -m "$models/stories260K.gguf" -p "$story" --ids)" "$want" "story ids"
same "$("$bin" tokenize -m "$models/stories260K.bin" -p "$story" --ids)" "$want" "llama2.c checkpoint"
same "$("$bin" tokenize -m "$models/stories260K.gguf" -p "$story" --ids --no-bos)" "[${want#\[1, }" "--no-bos"

text="Héllo wörld — ça va? Über naïve café. 日本語のテキスト 🦙 ½"
same "$("$bin" tokenize -m "$models/qwen2.Q8_0.gguf" -p "$text" --ids)" \
    "[39, 18503, 385, 289, 9416, 507, 1959, 37943, 11164, 30, 49371, 94880, 586, 51950, 13, 75402, 21894, 102819, 15767, 56833, 61803, 70534, 11162, 99, 247, 220, 26062]" \
    "qwen2 non-ASCII ids"

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf 'Once upon a time' > "$tmp"
same "$("$bin" tokenize -m "$models/stories260K.gguf" -f "$tmp")" "     1 -> '<s>'
   403 -> ' Once'
   407 -> ' upon'
   261 -> ' a'
   378 -> ' time'" "per-token lines"

# special-token text is text unless --special; Phi-3's tokens swallow the newline after them
same "$("$bin" tokenize -m "$models/phi3.Q8_0.gguf" -p "<|user|>
Tell" --ids --special --no-bos)" "[32010, 24948]" "--special"
"$bin" tokenize -m "$models/phi3.Q8_0.gguf" -p "<|user|>" --ids | grep -q 32010 &&
    fail "control token made from text without --special"

"$bin" tokenize -m "$models/stories260K.gguf" >/dev/null 2>&1
same $? 2 "no text"
"$bin" tokenize -m "$models/stories260K.gguf" -p a -f "$tmp" >/dev/null 2>&1
same $? 2 "-p and -f"
"$bin" tokenize -m "$models/no-such-model.gguf" -p a >/dev/null 2>&1
same $? 3 "missing model"
"$bin" tokenize -m "$models/stories260K.gguf" -f "$tmp.none" >/dev/null 2>&1
same $? 1 "missing text file"

[ "$fails" -eq 0 ] && echo "tokenize: all checks passed"
[ "$fails" -eq 0 ]
