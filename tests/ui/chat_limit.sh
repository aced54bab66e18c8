#!/bin/sh
# A reply stopped by the token limit is marked, in line mode and
# full-screen mode, live and when a saved session shows it again; a reply
# that ended by itself is not.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
LIVE='^\[stopped at -n 12: /set n-predict N for longer\]$'
AGAIN='^\[stopped at the token limit: /set n-predict N for longer\]$'
# the first reply is scripted (it ends as at an end-of-generation token),
# the next ones are sampled and run to -n
printf 'Hi there.\n' >"$T_DIR/replies"
t_start "CONFAB_TEST_REPLIES=$T_DIR/replies $T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 12 --seed 1"
t_prompt 30
t_send "Hello."
t_wait_count "$STATS" 1 30
t_prompt 10
[ "$(t_count 'stopped at')" -eq 0 ] || fail "a reply that ended by itself is marked"
t_send "Tell me a story."
t_wait "$LIVE" 30
t_wait_count "$STATS" 2 10
t_prompt 10
t_send "/save limit.session"
t_wait '^saved to limit\.session$' 10
t_send "/load limit.session"
t_wait '^loaded limit\.session: 4 messages$' 10
[ "$(t_count "$AGAIN")" -eq 1 ] || fail "the reloaded reply is not marked once"
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "line mode: exit status $T_STATUS"

t_start "$T_CHAT --tui -m $T_MODELS/stories260K-chatml.gguf -n 12 --seed 1 --session limit.session"
t_wait_status 'ready' 30
t_wait "$AGAIN" 10
t_send "Go on."
t_wait "$LIVE" 30
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "--tui: exit status $T_STATUS"
t_done
