#!/bin/sh
# Markdown at 60 columns (replies scripted with CONFAB_TEST_REPLIES): a
# table wider than the terminal has its cells wrapped within its columns,
# every screen line of it a whole row line between pipes, within the width,
# and its cells' words all there; a list item and a quote that wrap hang
# (the item's rows under its text, the quote's rows keep '>').  Full-screen
# mode the same: the table's rows never split across screen lines, list
# items and quotes hanging.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
replies=$T_DIR/replies.txt
line='Models:\n\n\| Model \| Architecture \| Notes \|\n\|:--\|:-:\|--:\|\n\| qwen3 \| dense transformer with grouped query attention \| the default chat model, small and quick \|\n\| gemma4 \| hybrid \| per-layer embeddings \|\n\n- a list item that is long enough to wrap past the sixty columns of this terminal\n> a quote that is long enough to wrap past the sixty columns of this terminal too\n\nThe end.'
for i in 1 2 3; do printf '%s\n' "$line"; done >"$replies"
STATS='^(prompt|reply) [0-9]+ tok'
WORDS='dense transformer with grouped query attention the default chat model, small and quick'

check_table() { # $1: what, on stdin the screen
    rows=$(grep -E '^[|]')
    [ "$(echo "$rows" | wc -l)" -ge 6 ] || fail "$1: the table is not wrapped within its columns: $rows"
    echo "$rows" | grep -Eqv '^[|].*[|]$' && fail "$1: a table line that is not a whole row line: $rows"
    echo "$rows" | awk 'length($0) > 60 { exit 1 }' || fail "$1: a table line past 60 columns: $rows"
    words=$(echo "$rows" | awk 'NR > 2 && /^[|] gemma4/ { exit } NR > 2' | awk -F'|' '{ c3 = c3 " " $3; c4 = c4 " " $4 } END { print c3 " " c4 }' |
        tr -s ' ' | sed 's/^ //; s/ $//')
    [ "$words" = "$WORDS" ] || fail "$1: the cells' words are not all there: '$words'"
}

T_COLS=60 t_start "CONFAB_TEST_REPLIES=$replies $T_CHAT -m $model"
t_prompt 30
t_send "Show me."
t_wait "$STATS" 30
t_prompt
t_history | check_table "line mode"
t_history | grep -qxF '  columns of this terminal' || fail "the list item does not hang"
t_history | grep -qxF '> columns of this terminal too' || fail "the quote's rows lost '>'"
t_history | sed 's/ *$//' >"$T_DIR/rows"
tm capture-pane -t t -p -J -S -20000 | sed 's/ *$//' >"$T_DIR/joined"
cmp -s "$T_DIR/rows" "$T_DIR/joined" || fail "lines the terminal wrapped"
t_keys C-d
t_wait_exit 30

T_COLS=60 t_start "CONFAB_TEST_REPLIES=$replies $T_CHAT --tui -m $model"
t_wait_status 'ready' 30
t_send "Show me."
t_wait "$STATS" 30
t_screen | check_table "tui"
t_screen | grep -qxF '  columns of this terminal' || fail "tui: the list item does not hang"
t_screen | grep -Eqx '> (columns )?of this terminal too' || fail "tui: the quote's rows lost '>'"
t_keys C-d
t_wait_exit 30
t_done
