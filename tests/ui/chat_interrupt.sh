#!/bin/sh
# Line mode: Ctrl-C in the middle of a long reply stops it (the partial
# reply stays, marked as cut), and the chat goes on; Ctrl-C at the prompt
# clears the line.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
# Replies long enough to interrupt: at most 2000 tokens, 10 ms apart.
t_start "env CONFAB_TEST_TOKEN_DELAY_MS=10 $T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 2000 --seed 1"
t_prompt 30
t_send "Tell me a very long story."
# wait until the reply is under way, then stop it
t0=$(t_now)
while [ "$(t_history | sed -n '/^>>> Tell me/,$p' | wc -c)" -lt 200 ]; do
    t_over "$t0" 30 && { fail "no reply text"; break; }
    sleep 0.05
done
t_keys C-c
t_wait '^\[stopped: the partial reply stays in the conversation\]$' 10
t_wait "$STATS" 10
t_prompt 10
# the statistics say the reply was far from 2000 tokens
t_history | grep -E "$STATS" | tail -n 1 | grep -Eq 'reply ([0-9]{1,3}|1[0-9]{3}) tok' ||
    fail "the reply was not cut short"

# Ctrl-C at the prompt drops what was typed
t_type "this line is dropped"
t_wait '^>>> this line is dropped$' 5
t_keys C-c
t_wait '^>>> this line is dropped\^C$' 5
t_prompt 5

# the chat goes on: a new message gets a reply
t_send "/set n-predict 8"
t_send "Go on."
t_wait_count "$STATS" 2 30
t_prompt 10
t_send "/show context"
t_wait '4 messages$' 10
# the cut reply is in the conversation, marked as cut
t_send "/save cut.session"
t_wait '^saved to cut\.session$' 10
t_send "/load cut.session"
t_wait '\[cut\]$' 10
t_wait '^loaded cut\.session: 4 messages$' 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS"
t_done
