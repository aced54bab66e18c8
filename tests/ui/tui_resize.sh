#!/bin/sh
# Full-screen mode: a resize while a reply streams re-lays the screen out
# (and the reply goes on); the terminal is restored after SIGTERM, after
# SIGINT outside a reply, and after a crash.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
run="CONFAB_TEST_TOKEN_DELAY_MS=15 $T_CHAT --tui -m $T_MODELS/stories260K-chatml.gguf -n 2000 --seed 9"
t_start "$run"
t_wait_status 'ready' 30
t_send "Tell me a long story."
t_wait_status 'generating' 10
t_wait_growth 10

tm resize-window -t t -x 80 -y 24
t_wait_status 'generating .*temp 0\.80' 10
[ "$(t_screen | wc -l)" -eq 24 ] || fail "not 24 rows"
[ "$(t_screen | wc -L)" -le 80 ] || fail "a row wider than 80 columns"
t_wait_growth 10
tm resize-window -t t -x 100 -y 30
t_wait_status 'generating .*ctx \[.*temp 0\.80' 10
[ "$(t_screen | wc -l)" -eq 30 ] || fail "not 30 rows"
t_wait_growth 10
# narrower than the status bar: the sampler stays in view
tm resize-window -t t -x 50 -y 12
t_wait_status 'generating .*temp 0\.80 .*top-k 40' 10
t_keys C-c
t_wait_status 'ready' 10
tm resize-window -t t -x 120 -y 40
t_wait_status 'ready .*temp 0\.80' 10

# SIGTERM: leaves cleanly
pid=$(pgrep -f -n -- "--tui -m $T_MODELS/stories260K-chatml.gguf -n 2000 --seed 9")
[ -n "$pid" ] && kill -TERM "$pid"
t_wait_exit 30
[ "$T_STATUS" = 143 ] || fail "exit status $T_STATUS, not 143"
t_terminal_restored

# SIGINT at the prompt: leaves cleanly; during a reply: stops it
t_start "$run"
t_wait_status 'ready' 30
t_send "Another long story."
t_wait_status 'generating' 10
pid=$(pgrep -f -n -- "--tui -m $T_MODELS/stories260K-chatml.gguf -n 2000 --seed 9")
kill -INT "$pid"
t_wait_status 'ready' 10
t_wait '^\[stopped' 5
kill -INT "$pid"
t_wait_exit 30
[ "$T_STATUS" = 130 ] || fail "exit status $T_STATUS, not 130"
t_terminal_restored

# a crash: the handler ends full-screen mode before the default action
t_start "$run"
t_wait_status 'ready' 30
pid=$(pgrep -f -n -- "--tui -m $T_MODELS/stories260K-chatml.gguf -n 2000 --seed 9")
kill -SEGV "$pid"
t_wait_exit 30
[ "$T_STATUS" = 139 ] || fail "exit status $T_STATUS, not 139"
t_terminal_restored
t_done
