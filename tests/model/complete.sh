#!/bin/sh
# confab complete end to end: greedy continuations equal llama.cpp's
# (../shared/refs/stories260K.json, prompt "story", greedy.tokens), for the
# GGUF and for the llama2.c checkpoint; --dump-logits writes n_vocab floats;
# bad input gets one error line and the documented exit code.
bin=${CONFAB_BIN:?} models=${CONFAB_SHARED:?}/models
[ -d "$models" ] || exit 77
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
prompt="Once upon a time, there was a little girl named Lily. She loved to play"
want="410 408 419 292 411 322 265 282 295 433 426 385 328 432 358 394 261 370 432 352 266 268 388 426 338 391 266 267 337 335 312 432"
text=" outside in the park. One day, she saw a big, red ball. She wanted to play with it,"
tmp=$(mktemp -d)

for m in stories260K.gguf stories260K.bin; do
    got=$("$bin" complete -m "$models/$m" -p "$prompt" --temp 0 -n 32 --ignore-eos --ids -t 2)
    [ "$got" = "$want" ] || fail "$m greedy ids: $got"
done
got=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --temp 0 -n 32 -t 1)
[ "$got" = "$text" ] || fail "greedy text: '$got'"

"$bin" complete -m "$models/stories260K.gguf" -p "$prompt" -n 0 --dump-logits "$tmp/l.bin" >/dev/null ||
    fail "--dump-logits"
[ "$(wc -c <"$tmp/l.bin")" -eq 2048 ] || fail "--dump-logits wrote $(wc -c <"$tmp/l.bin") bytes"

# sampling with a seed is reproducible; different seeds differ
a=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --seed 7 -n 40 --ids)
b=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --seed 7 -n 40 --ids)
c=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --seed 8 -n 40 --ids --temp 1.5)
[ "$a" = "$b" ] || fail "same seed, different output"
# llama-cli's spellings: -s for --seed, --predict for -n
d=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" -s 7 --predict 40 --ids)
[ "$a" = "$d" ] || fail "-s 7 --predict 40 differs from --seed 7 -n 40"
[ "$a" != "$c" ] || fail "different seeds, same output"
# llama.cpp's repeat-last-n -1: the whole context
"$bin" complete -m "$models/stories260K.gguf" -p "$prompt" -n 4 --repeat-last-n -1 --repeat-penalty 1.1 \
    >/dev/null || fail "--repeat-last-n -1"
# more threads than CPUs: one line, then as many threads as CPUs
got=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --temp 0 -n 32 -t 1000 2>"$tmp/err")
[ "$got" = "$text" ] || fail "-t 1000: '$got'"
grep -Eq "^confab: -t 1000: only [0-9]+ CPUs? (is|are) online, so [0-9]+ threads? \(more would wait for each other\)$" \
    "$tmp/err" || [ "$(nproc --all)" -ge 1000 ] || fail "-t 1000 says: '$(cat "$tmp/err")'"

# a full context cuts the text short of -n: the text so far, then one line
# naming it (exit 0, as when the end-of-generation token comes first)
got=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --temp 0 -n 32 -c 26 --ids 2>"$tmp/err"); rc=$?
[ $rc -eq 0 ] && [ "$got" = "$(echo "$want" | cut -d" " -f1-6)" ] || fail "cut by the context: rc $rc, '$got'"
[ "$(cat "$tmp/err")" = "confab: context full (26 tokens): stopped after 6 generated tokens (-c sets the size)" ] ||
    fail "cut by the context: '$(cat "$tmp/err")'"
"$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --temp 0 -n 6 -c 26 --ids 2>"$tmp/err" >/dev/null
[ -s "$tmp/err" ] && fail "-n 6 in a context of 26 says: '$(cat "$tmp/err")'"

# errors: one line, exit codes 2 (usage), 3 (model), 5 (context)
check_err() { # want_rc pattern args...
    want_rc=$1 pat=$2
    shift 2
    msg=$("$bin" complete "$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq "$want_rc" ] && [ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] &&
        printf "%s" "$msg" | grep -q -e "$pat" || fail "complete $*: rc $rc, '$msg'"
}
check_err 2 "not a number" -m "$models/stories260K.gguf" -p x --temp abc
# the same ranges as chat's options and /set (one table, the sampler's)
check_err 2 "^confab: --presence-penalty: '3' is not a number from -2 to 2$" -m "$models/stories260K.gguf" -p x --presence-penalty 3
check_err 2 "^confab: --repeat-penalty: '0' is not a number above 0 up to 100$" -m "$models/stories260K.gguf" -p x --repeat-penalty 0
check_err 2 "-p TEXT or -f FILE" -m "$models/stories260K.gguf"
check_err 3 "cannot open" -m "$tmp/none.gguf" -p x
check_err 5 "context holds" -m "$models/stories260K.gguf" -p "$prompt" -c 8
# an architecture confab does not run: one line naming it and the list; inspect still reads it
printf 'GGUF\003\000\000\000\000\000\000\000\000\000\000\000\001\000\000\000\000\000\000\000\024\000\000\000\000\000\000\000general.architecture\010\000\000\000\005\000\000\000\000\000\000\000mamba' >"$tmp/mamba.gguf"
check_err 3 "architecture 'mamba' is not supported; confab runs llama (.*), qwen3 (Qwen3), gemma3" -m "$tmp/mamba.gguf" -p x
"$bin" inspect "$tmp/mamba.gguf" | grep -q "general.architecture .*'mamba'" || fail "inspect of an unsupported architecture"
rm -rf "$tmp"
[ $fails -eq 0 ] && echo "complete: ok"
