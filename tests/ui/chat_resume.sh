#!/bin/sh
# Save, quit, resume with --session: the history is there and the chat
# goes on; --autosave; a failed /load changes nothing.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
STATS='^prompt [0-9]+ tok'

t_start "$T_CHAT -m $model -n 12 --seed 3"
t_prompt 30
t_send "My name is Ada."
t_wait_count "$STATS" 1 30
t_send "Remember the dragon."
t_wait_count "$STATS" 2 30
t_prompt
t_send "/save $T_DIR/chat.session"
t_wait "^saved to $T_DIR/chat.session\$" 10
t_send "/bye"
t_wait_exit 30
[ -s "$T_DIR/chat.session" ] || fail "no session file"

# resume: the conversation is shown and known to the session
t_start "$T_CHAT -m $model -n 12 --session $T_DIR/chat.session"
t_wait '^>>> My name is Ada\.$' 30
t_wait '^>>> Remember the dragon\.$' 5
t_prompt
t_send "/show context"
t_wait '4 messages$' 10
t_send "What was my name?"
t_wait_count "$STATS" 1 30
t_prompt
t_send "/show context"
t_wait '6 messages$' 10
# /save with no name writes to the session file
t_send "/save"
t_wait "^saved to $T_DIR/chat.session\$" 10

# a failed /load: one error line, the conversation stays
printf 'not a session file at all' >"$T_DIR/work/junk.session"
n=$(t_count '^error: ')
t_send "/load junk.session"
t_wait_count '^error: ' $((n + 1)) 10
t_send "/load"
t_wait '^error: usage: /load FILE$' 10
t_send "/show context"
t_wait_count '6 messages$' 2 10
t_keys C-d
t_wait_exit 30

# --autosave on Ctrl-D, to a new --session file
t_start "$T_CHAT -m $model -n 8 --session $T_DIR/auto.session --autosave"
t_prompt 30
t_send "Autosave me."
t_wait "$STATS" 30
t_prompt
t_keys C-d
t_wait_exit 30
[ -s "$T_DIR/auto.session" ] || fail "--autosave wrote nothing"
t_start "$T_CHAT -m $model -n 8 --session $T_DIR/auto.session"
t_wait '^>>> Autosave me\.$' 30
t_keys C-d
t_wait_exit 30

# a --session file that cannot be loaded: one error line, exit status 4
t_start "$T_CHAT -m $model --session $T_DIR/work/junk.session"
t_wait_exit 30
[ "$T_STATUS" = 4 ] || fail "bad --session file: exit status $T_STATUS, not 4"
[ "$(t_screen | grep -c '^confab: ')" -eq 1 ] || { fail "not one error line:"; t_dump; }
t_done
