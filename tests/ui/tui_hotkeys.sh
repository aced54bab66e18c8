#!/bin/sh
# Full-screen mode: F5-F9 change the sampler while a reply streams (the
# status bar shows it at once and tokens keep coming), Ctrl-C stops the
# reply, PgUp/PgDn and the mouse wheel scroll, /show agrees, Ctrl-D leaves and the terminal
# is as before.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
t_start "CONFAB_TEST_TOKEN_DELAY_MS=15 $T_CHAT --tui -m $T_MODELS/stories260K-chatml.gguf -n 2000 --seed 5"
t_wait_status 'ready .*temp 0\.80 .*top-k 40 .*top-p 0\.95' 30
tm display -p -t t '#{alternate_on}' | grep -q 1 || fail "not on the alternate screen"
t_send "Tell me a long story."
t_wait '^> Tell me a long story\.$' 10
t_wait_status 'generating' 10
t_wait_growth 10

t_keys F6
t_wait_status 'generating .*temp 0\.90 ' 5
t_wait_growth 10
t_status | grep -q generating || fail "the reply ended before the hotkey was checked"
t_keys F5 F5
t_wait_status 'generating .*temp 0\.70 ' 5
t_keys F7
t_wait_status 'generating .*top-k 20 ' 5
t_keys F8 F8
t_wait_status 'generating .*top-k 80 ' 5
t_keys F9
t_wait_status 'generating .*temp 0 \(greedy\)' 5
t_wait_growth 10
t_keys F9
t_wait_status 'generating .*temp 0\.70 ' 5

t_keys C-c
t_wait '^\[stopped: the partial reply stays in the conversation\]$' 10
t_wait_status 'ready' 10
t_wait '^prompt [0-9]+ tok' 5
t_send "/show settings"
t_wait '^temp +0\.7$' 10
t_wait '^top-k +80$' 5

# PgUp scrolls back (the status bar says so and the top shows), PgDn returns
for i in 1 2 3; do t_send "/help"; done
t_wait_count '^/bye +leave ' 3 10
t_screen | grep -q '^confab 0\.1\.0 - ' && fail "the transcript does not fill the pane"
t_keys PPage PPage PPage PPage
t_wait_status 'scrolled [0-9]+' 5
t_wait '^confab [0-9.]+ - ' 5
t_keys NPage NPage NPage NPage
# the keys arrive one by one: 'ready' may show while still scrolled
at_bottom() { t_status_has 'ready' && ! t_status_has 'scrolled'; }
t_until 5 "PgDn to return to the bottom" at_bottom
# so does the mouse wheel: xterm reports of wheel up (button 64), then down
wheel() { t_type "$(printf '\033[M%s!!' "$1")"; }
wheel '`'
t_wait_status 'scrolled [0-9]+' 5
for i in 1 2 3 4 5 6; do wheel a; done
t_until 5 "the wheel to return to the bottom" at_bottom

# the save state in the status bar
t_wait_status '│ not saved' 5
t_send "/save t.session"
t_wait_status '│ saved( │| *$)' 10
# a pasted block of lines is one message
printf 'pasted one\npasted two' >"$T_DIR/lines.txt"
t_send "/set n-predict 4"
t_paste "$T_DIR/lines.txt"
t_keys Enter
t_wait '^> pasted one$' 10
t_wait '^pasted two$' 5
t_wait_status 'ready .*│ unsaved' 30
t_send "/show context"
t_wait ', 4 messages$' 10

# Ctrl-C at the prompt clears the line
t_type "never sent"
t_wait '^> never sent$' 5
t_keys C-c
t_wait '^> ?$' 5
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS, not 0"
t_terminal_restored
t_done
