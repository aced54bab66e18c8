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

# Ctrl-C (SIGINT) while the prompt is evaluated stops it at once: one
# line, exit 130 (the test delay makes each layer of the prefill 2 s; the
# handler, which /proc shows, is put in place just before it)
catches_int() { # pid
    mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null)
    [ -n "$mask" ] && [ $((0x$mask & 2)) -ne 0 ]
}
CONFAB_TEST_PREFILL_DELAY_MS=2000 "$bin" complete -m "$models/stories260K.gguf" -p "$prompt" \
    -t 1 >"$tmp/out" 2>"$tmp/err" &
pid=$!
while ! catches_int $pid && kill -0 $pid 2>/dev/null; do sleep 0.05; done
t0=$(date +%s%N)
kill -INT $pid
wait $pid; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc -eq 130 ] && [ ! -s "$tmp/out" ] && [ $ms -lt 1500 ] &&
    [ "$(cat "$tmp/err")" = "confab: interrupted while the prompt (21 tokens) was evaluated" ] ||
    fail "SIGINT during the prompt: rc $rc after $ms ms, '$(cat "$tmp/err")'"
# and while it generates: the text so far, then one line
CONFAB_TEST_PREFILL_DELAY_MS=0 "$bin" complete -m "$models/stories260K.gguf" -p "$prompt" -n -1 \
    --ignore-eos -c 4096 -t 1 >"$tmp/out" 2>"$tmp/err" &
pid=$!
while [ ! -s "$tmp/out" ] && kill -0 $pid 2>/dev/null; do sleep 0.05; done
kill -INT $pid
wait $pid; rc=$?
[ $rc -eq 130 ] && [ -s "$tmp/out" ] &&
    grep -q "^confab: interrupted after [0-9]* generated tokens$" "$tmp/err" ||
    fail "SIGINT during the reply: rc $rc, '$(cat "$tmp/err")'"

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
# speculative decoding: a draft model (itself, and the same weights at Q4_0
# for Q8_0) or lookup gives the same greedy tokens; a draft of another
# vocabulary, or both ways at once, is one error line (exit 2)
for spec in "-md $models/stories260K.gguf --draft-p-min 0" "--lookup" "-md $models/stories260K.gguf --draft-max 3"; do
    got=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --temp 0 -n 32 --ignore-eos --ids -t 1 $spec -v 2>"$tmp/err")
    [ "$got" = "$want" ] || fail "speculative ($spec): $got"
    grep -q "^confab: speculative: drafted [0-9]*, accepted" "$tmp/err" || fail "speculative ($spec): no summary"
done
a=$("$bin" complete -m "$models/quant-Q8_0.gguf" -p "$prompt" --temp 0 -n 24 --ids -t 1)
b=$("$bin" complete -m "$models/quant-Q8_0.gguf" -p "$prompt" --temp 0 -n 24 --ids -t 1 -md "$models/quant-Q4_0.gguf" --draft-p-min 0)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "Q8_0 with a Q4_0 draft: '$a' / '$b'"
a=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --seed 5 -n 40 --ids -t 1)
b=$("$bin" complete -m "$models/stories260K.gguf" -p "$prompt" --seed 5 -n 40 --ids -t 1 --lookup)
[ "$a" = "$b" ] || fail "sampled with --lookup: other tokens for the same seed"
check_err 2 "-md .*vocabulary has 32000 tokens, the model's 512: they must be the same" -m "$models/stories260K.gguf" \
    -p x -md "$models/llama-spm.Q8_0.gguf"
check_err 2 "-md and --lookup: choose one way to guess" -m "$models/stories260K.gguf" -p x -md "$models/stories260K.gguf" --lookup
check_err 2 "--draft-max" -m "$models/stories260K.gguf" -p x --lookup --draft-max 0
rm -rf "$tmp"
[ $fails -eq 0 ] && echo "complete: ok"
