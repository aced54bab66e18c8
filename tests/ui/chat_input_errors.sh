#!/bin/sh
# Bad input gets one clear line and the chat goes on: invalid UTF-8 is
# replaced by U+FFFD (with a note), a 100 kB paste that does not fit the
# context is refused, a pasted block of lines is one message, a full
# context drops the oldest turns.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf -c 512 -n 8"
t_prompt 30

# invalid UTF-8: two bytes that can never start a character
t_type "broken "
t_keys -H ff fe
t_send " bytes"
t_wait '^note: 2 invalid UTF-8 sequences replaced by U\+FFFD$' 10
t_wait_count "$STATS" 1 30
t_prompt

# 100 kB on one line: too long for a 512-token context
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "word "; }' >"$T_DIR/big.txt"
t_paste "$T_DIR/big.txt"
t_keys Enter
t_wait '^error: .*context' 60
t_prompt 30
[ "$(t_count '^error: ')" -eq 1 ] || fail "not one error line for the long paste"
t_send "/show context"
t_wait ', 2 messages$' 10

# a pasted block of three lines is one message, one reply
printf 'first pasted line\nsecond pasted line\nthird pasted line' >"$T_DIR/lines.txt"
t_paste "$T_DIR/lines.txt"
t_wait '^third pasted line$' 10
t_keys Enter
t_wait_count "$STATS" 2 30
t_prompt
t_send "/show context"
t_wait ', 4 messages$' 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS"

# a full context: the oldest turns are dropped, and the chat goes on
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf -c 200 -n 40"
t_prompt 30
for i in 1 2 3 4; do
    t_send "Message number $i."
    t_wait_count "$STATS" $i 30
    t_prompt
done
t_wait '^context full: the oldest [0-9]+ tokens were dropped$' 5
t_send "/show context"
t_wait '^context: [0-9]+ / 200 tokens used \([0-9]+%\), [2-6] messages$' 10
t_keys C-d
t_wait_exit 30

# a long message that fits a larger context is taken
awk 'BEGIN { for (i = 0; i < 150; i++) printf "story "; }' >"$T_DIR/long.txt"
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf -c 2048 -n 4"
t_prompt 30
t_paste "$T_DIR/long.txt"
t_keys Enter
t_wait "$STATS" 60
[ "$(t_count '^error: ')" -eq 0 ] || fail "a message that fits was refused"
t_keys C-d
t_wait_exit 30
t_done
