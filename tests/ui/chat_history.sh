#!/bin/sh
# History keeps a message of several lines whole: after a """ block, Up
# brings the message back as one entry (not the closing """), Enter sends
# it again as it was; a line continued with a backslash, the same.  The
# history file keeps it whole for the next chat.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
STATS='^(prompt|reply) [0-9]+ tok'

t_start "$T_CHAT -m $model -n 8"
t_prompt 30
t_send '"""'
t_send 'line one'
t_send 'line two'
t_send '"""'
t_wait_count "$STATS" 1 30
t_prompt
t_keys Up
t_until 10 "Up to recall the whole message" sh -c \
    "tmux -L $T_SOCK capture-pane -t t -p | sed '/^\$/d' | tail -n 2 | tr '\n' '|' | grep -qxF '>>> line one|line two|'"
t_keys Enter
t_wait_count "$STATS" 2 30
t_prompt
t_send 'first \'
t_send 'second'
t_wait_count "$STATS" 3 30
t_prompt
t_send '/show prompt'
t_prompt
# the block sent twice as the one message it was, and the continued line
[ "$(t_count '^line two<\|im_end\|>$')" -ge 2 ] || fail "the recalled message was not sent whole"
[ "$(t_count '^first *$')" -ge 1 ] || fail "the continued line was not sent"
t_keys C-d
t_wait_exit 30

# the next chat: Up, Up (past /show prompt) brings the continued message back whole
t_start "$T_CHAT -m $model -n 8"
t_prompt 30
t_keys Up Up
t_until 10 "the history file to keep the message whole" sh -c \
    "tmux -L $T_SOCK capture-pane -t t -p | sed '/^\$/d' | tail -n 2 | tr '\n' '|' | grep -qxF '>>> first|second|'"
t_keys C-u
t_keys C-d
t_wait_exit 30
t_done
