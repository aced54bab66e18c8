#!/bin/sh
# Ctrl-C while a long pasted message is evaluated (before any reply) stops
# the evaluation at once, in line mode and full-screen mode: one line says
# so, the prompt comes back, the conversation is as before the message
# (Up recalls it), and the chat goes on.  The test delay makes each layer
# of a prefill 1 s, so the evaluation lasts 5 s or more and the time to the
# prompt coming back tells whether it was stopped within a layer.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
STOPPED='^\[stopped while the prompt was evaluated: the conversation is as it was\]$'
# about 300 tokens, pasted as one line
i=0 long=""
while [ $i -lt 12 ]; do
    long="$long Once upon a time there was a little girl named Lily who liked to play in the park."
    i=$((i + 1))
done
printf '%s' "Read this story.$long" >"$T_DIR/long.txt"

# seconds from the Ctrl-C to $1 on the screen (and the prompt, in line mode)
stop_time() {
    t0=$(t_now)
    t_keys C-c
    t_wait "$STOPPED" 20
    [ "$1" = line ] && t_prompt 20
    t_elapsed "$t0"
}

t_start "env CONFAB_TEST_PREFILL_DELAY_MS=1000 $T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 8 --seed 1"
t_prompt 30
t_send "Hello."
t_wait_count "$STATS" 1 60
t_prompt 10
t_paste "$T_DIR/long.txt"
t_wait 'Lily who liked to play in the park\.$' 10
t_keys Enter
# readline took the line: the cursor is on the next, empty one
t_until 10 "the message to be sent" sh -c "[ \"\$(tmux -L $T_SOCK display -p -t t '#{cursor_x}')\" = 0 ]"
s=$(stop_time line)
echo "line mode: the prompt was back ${s} s after Ctrl-C"
awk -v s="$s" 'BEGIN { exit !(s < 2) }' || fail "the prompt came back only after $s s"
t_history | grep -Eq "$STATS" && [ "$(t_count "$STATS")" -eq 1 ] || fail "a reply was written"
# Up recalls the message; the conversation is the first exchange alone
t_keys Up
t_wait '^>>> Read this story\. Once upon a time' 5
t_keys C-c
t_prompt 10
t_send "/show context"
t_wait '2 messages$' 10
t_send "Go on."
t_wait_count "$STATS" 2 60
t_prompt 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "line mode: exit status $T_STATUS"

# full-screen mode: raw keys, Ctrl-C read between the layers
t_start "env CONFAB_TEST_PREFILL_DELAY_MS=1000 $T_CHAT --tui -m $T_MODELS/stories260K-chatml.gguf -n 8 --seed 1"
t_wait_status 'ready' 30
t_paste "$T_DIR/long.txt"
t_keys Enter
s=$(stop_time tui)
echo "full-screen mode: stopped ${s} s after Ctrl-C"
awk -v s="$s" 'BEGIN { exit !(s < 2) }' || fail "--tui: stopped only after $s s"
t_wait_status 'ready' 10
t_send "/show context"
t_wait '0 messages$' 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "--tui: exit status $T_STATUS"
t_done
