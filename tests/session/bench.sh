#!/bin/sh
# confab bench --chat-turns and --session-restore print the lines their
# reports promise, on a tiny real model; with replies that think, later
# turns still prefill only from the first difference.
bin=${CONFAB_BIN:?} shared=${CONFAB_SHARED:?}
model="$shared/models/stories260K-chatml.gguf"
[ -f "$model" ] || exit 77
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

out=$("$bin" bench -m "$model" -t 1 --chat-turns 4 2>&1) || fail "--chat-turns: $out"
for k in 1 2 3 4; do
    printf '%s\n' "$out" | grep -q "^turn $k: prefilled [0-9]* tokens, ttft [0-9.]* ms$" ||
        fail "--chat-turns has no line for turn $k: $out"
done
printf '%s\n' "$out" | tail -n 1 | grep -q "^ttft turn4/turn2 = [0-9.]*$" ||
    fail "--chat-turns does not end with the ratio: $out"

# a reasoning model whose template drops earlier thinking (Qwen3, replies
# scripted): each later turn re-evaluates only from the first difference,
# the last answer (its thinking dropped) and the new turn, so it prefills
# exactly the answer's tokens more than the same chat without thinking
qwen3="$shared/models/qwen3-bpe.Q8_0.gguf"
if [ -f "$qwen3" ]; then
    dir=$(mktemp -d "${TMPDIR:-/tmp}/confab-bench-think.XXXXXX")
    for k in 1 2 3 4; do printf '%s\n' '<think>\nA thought.\n</think>\n\nYes indeed.'; done >"$dir/think"
    for k in 1 2 3 4; do printf '%s\n' 'Yes indeed.'; done >"$dir/plain"
    answer=$("$bin" tokenize -m "$qwen3" -p "Yes indeed." | wc -l)
    prefills() { CONFAB_TEST_REPLIES=$1 "$bin" bench -m "$qwen3" -t 1 --chat-turns 4 |
        sed -n 's/^turn [0-9]*: prefilled \([0-9]*\) tokens.*/\1/p' | tr '\n' ' '; }
    think=$(prefills "$dir/think") plain=$(prefills "$dir/plain")
    set -- $plain
    want="$1 $(($2 + answer)) $(($3 + answer)) $(($4 + answer)) "
    [ "$think" = "$want" ] || fail "--chat-turns with thinking prefilled $think, not $want"
    rm -rf "$dir"
fi

out=$("$bin" bench -m "$model" -t 1 --session-restore 2>&1) || fail "--session-restore: $out"
printf '%s\n' "$out" | tail -n 1 |
    grep -q "^reprefill [0-9.]* ms, restore+first token [0-9.]* ms, speedup [0-9.]*$" ||
    fail "--session-restore does not end with the timings: $out"
ls /tmp/confab-bench-session-* >/dev/null 2>&1 && fail "--session-restore left its file behind"

[ $fails -eq 0 ] && echo "session-bench: ok"
exit $((fails > 0))
