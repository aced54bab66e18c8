#!/bin/sh
# Line mode: a model load with progress, a 3-turn chat with a statistics
# line after each reply, the history file, colour only without NO_COLOR.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
STATS='^prompt [0-9]+ tok, [0-9.]+ t/s · reply [0-9]+ tok, [0-9.]+ t/s · first token [0-9]+ ms · context [0-9]+/[0-9]+$'

t_start "$T_CHAT -m $model -n 24 --seed 7"
t_wait '^loaded stories260K-chatml.gguf' 30
t_prompt
for msg in "Tell me a story." "What happened next?" "And then?"; do
    n=$(t_count "$STATS")
    t_send "$msg"
    t_wait_count "$STATS" $((n + 1)) 30
    t_prompt
done
# each message is followed by a reply: text between it and the stats line
t_history | awk -v s="$STATS" '/^>>> / { m = 1; next } m && $0 ~ s { if (!text) bad++; m = text = 0; next } m && NF { text = 1 } END { exit bad > 0 }' ||
    fail "a message got no reply text"
t_send "/show context"
t_wait '^context: [0-9]+ / [0-9]+ tokens used \([0-9]+%\), 6 messages$' 10
# colour on a terminal: the statistics line is dim (as the line before it
# that marks the reply stopped at -n, so the dim may start there)
tm capture-pane -t t -p -e | tr '\n' ' ' |
    grep -Eq "$(printf '\033')\[2m(\[stopped at -n 24: [^]]*\] )?prompt [0-9]" ||
    fail "no dim statistics line"
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS after Ctrl-D"
for msg in "Tell me a story." "What happened next?" "And then?" "/show context"; do
    grep -qxF "$msg" "$XDG_STATE_HOME/confab/history" || fail "'$msg' is not in the history file"
done

# NO_COLOR: not one colour or attribute sequence
t_start "env NO_COLOR=1 $T_CHAT -m $model -n 8 --seed 7"
t_prompt
t_send "Hello."
t_wait "$STATS" 30
t_prompt
tm capture-pane -t t -p -e | grep -q "$(printf '\033')\[" && fail "escape sequences with NO_COLOR set"
# the history came back: Up recalls the last message of the first run
t_keys Up Up
t_wait '^>>> Hello\.$' 5
t_keys C-u /bye Enter
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS after /bye"
t_done
