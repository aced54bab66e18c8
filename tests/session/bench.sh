#!/bin/sh
# confab bench --chat-turns and --session-restore print the lines their
# reports promise, on a tiny real model.
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

out=$("$bin" bench -m "$model" -t 1 --session-restore 2>&1) || fail "--session-restore: $out"
printf '%s\n' "$out" | tail -n 1 |
    grep -q "^reprefill [0-9.]* ms, restore+first token [0-9.]* ms, speedup [0-9.]*$" ||
    fail "--session-restore does not end with the timings: $out"
ls /tmp/confab-bench-session-* >/dev/null 2>&1 && fail "--session-restore left its file behind"

[ $fails -eq 0 ] && echo "session-bench: ok"
exit $((fails > 0))
