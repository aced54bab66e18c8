#!/bin/sh
# What confab itself prints in line mode fits a 60-column terminal broken
# at spaces, never by the terminal mid-word: the banner and its notes, a
# reply's statistics (one line: fields left out, the least important
# first), /help (later rows under the second column), an error (later rows
# under "error: "), /show.  A line the terminal wrapped is one that
# capture-pane -J joins.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
STATS='^(prompt [0-9]+ tok|reply [0-9]+ tok)'

T_COLS=60 t_start "$T_CHAT -m $model -n 20"
t_prompt 30
t_send "Hello"
t_wait "$STATS" 30
t_prompt
for cmd in "/help" "/set foo 1" "/show settings" "/show model" "/help set"; do
    t_send "$cmd"
    t_prompt
done
# (-J keeps the blanks that end a row)
t_history | sed 's/ *$//' >"$T_DIR/rows"
tm capture-pane -t t -p -J -S -20000 | sed 's/ *$//' >"$T_DIR/joined"
cmp -s "$T_DIR/rows" "$T_DIR/joined" ||
    fail "lines the terminal wrapped: $(diff "$T_DIR/rows" "$T_DIR/joined" | grep '^>' | head -5)"
grep -q 'Hugging Face' "$T_DIR/rows" || fail "the banner's note broke 'Hugging Face'"
stats=$(grep -E "$STATS" "$T_DIR/rows")
echo "$stats" | grep -q 'reply 20 tok, [0-9.]* t/s' || fail "the statistics lost the reply: $stats"
echo "$stats" | grep -q 'context [0-9]*/2048' || fail "the statistics lost the context: $stats"
grep -Eq '^ {29}[a-z]' "$T_DIR/rows" || fail "/help's rows do not hang under their column"
grep -Eq '^error: unknown setting' "$T_DIR/rows" || fail "no error line"
grep -Eq '^       [a-z-]+, ' "$T_DIR/rows" || fail "the error's rows do not hang under 'error: '"
t_keys C-d
t_wait_exit 30

# wide enough, the statistics keep every field
T_COLS=120 t_start "$T_CHAT -m $model -n 20"
t_prompt 30
t_send "Hello"
t_wait "$STATS" 30
t_screen | grep -Eq '^prompt [0-9]+ tok, .* · reply 20 tok, .* · first token [0-9]+ ms · context' ||
    fail "120 columns: not every field: $(t_screen | grep -E "$STATS")"
t_keys C-d
t_wait_exit 30
t_done
