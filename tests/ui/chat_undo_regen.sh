#!/bin/sh
# /undo drops the last exchange, /regen writes the last reply again, /clear
# starts over; with nothing to undo, one error line.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 16"
t_prompt 30
t_send "First question."
t_wait_count "$STATS" 1 30
t_send "Second question."
t_wait_count "$STATS" 2 30
t_prompt
t_send "/undo"
t_wait '^removed the last exchange \("Second question\."\)$' 10
t_send "/show context"
t_wait ', 2 messages$' 10
# /regen: a new reply (with its statistics) to the same message
t_send "/regen"
t_wait_count "$STATS" 3 30
t_prompt
t_send "/show context"
t_wait_count ', 2 messages$' 2 10
t_send "/undo"
t_wait '^removed the last exchange \("First question\."\)$' 10
t_send "/show context"
t_wait ', 0 messages$' 10
n=$(t_count '^error: ')
t_send "/undo"
t_wait_count '^error: ' $((n + 1)) 10
t_send "/regen"
t_wait_count '^error: ' $((n + 2)) 10
t_send "Third question."
t_wait_count "$STATS" 4 30
t_send "/clear"
t_wait '^conversation cleared' 10
t_send "/show context"
t_wait_count ', 0 messages$' 2 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS"
t_done
