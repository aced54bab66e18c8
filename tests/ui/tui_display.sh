#!/bin/sh
# What full-screen mode shows (100 columns): a resumed chat under the
# banner, not above it; slash commands echoed into the transcript above
# their output; /help lists the keys; the hint line while a reply streams
# is whole hints, never cut mid-hint; code frames as wide as the window
# (80 columns at most, as in line mode);
# Ctrl-Z suspends and fg resumes, redrawn (line mode too: its prompt and
# the line typed come back); on leaving, the chat's last screen stays on
# the normal screen.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
STATS='^(prompt|reply) [0-9]+ tok'
replies=$T_DIR/replies.txt
printf '%s\n' 'Code:\n\n```sh\necho hi\n```\n\nDone.' >"$replies"

t_start "$T_CHAT -m $model -n 8"
t_prompt 30
t_send "Hello there."
t_wait "$STATS" 30
t_prompt
t_send "/save $T_DIR/chat.session"
t_prompt
t_keys C-d
t_wait_exit 30

T_COLS=100 t_start "CONFAB_TEST_REPLIES=$replies CONFAB_TEST_TOKEN_DELAY_MS=30 $T_CHAT --tui -m $model --session $T_DIR/chat.session -n 400"
t_wait_status 'ready' 30
t_wait '^> Hello there\.$' 10
t_screen | grep -qx 'F3 thinking .* PgUp/PgDn scroll' || fail "the banner's key line is not whole"
banner=$(t_screen | grep -n '^confab [0-9.]* - ' | cut -d: -f1)
hello=$(t_screen | grep -n '^> Hello there\.$' | cut -d: -f1)
[ -n "$banner" ] && [ "$banner" -lt "$hello" ] || fail "the restored chat is not under the banner"
t_send "/show settings"
t_wait '^> /show settings$' 10
t_wait '^temp +0\.8$' 10
# the transcript's echo, not the input line (which a capture may take
# before it is cleared); one capture at a time, until the screen settles
above=0
for i in $(seq 50); do
    s=$(t_screen)
    cmd=$(echo "$s" | grep -n '^> /show settings$' | head -n 1 | cut -d: -f1)
    out=$(echo "$s" | grep -En '^temp +0\.8$' | head -n 1 | cut -d: -f1)
    [ -n "$cmd" ] && [ -n "$out" ] && [ "$cmd" -lt "$out" ] && { above=1; break; }
    sleep 0.1
done
[ $above = 1 ] || fail "the command is not above its output"
t_send "/help"
t_wait '^Keys: F3 thinking' 10
t_send "Show me code."
t_wait_status 'generating' 10
hint=$(t_screen | tail -n 1)
echo "$hint" | grep -q '^generating - Ctrl-C stops' || fail "no hint line while generating: '$hint'"
echo "$hint" | grep -Eq '(scroll|[0-9x]|greedy|thinking|probs|stops) *$' || fail "a hint cut mid-hint: '$hint'"
t_wait "$STATS" 60
t_screen | grep -Eq '^╭─ ```sh ─{71}$' || fail "the code frame is not as wide as the window: $(t_screen | grep '```sh')"
t_keys C-c
t_keys C-d
t_wait_exit 30
t_terminal_restored
t_history | grep -q '^> Show me code\.$' || fail "the chat's last screen is gone after leaving"
t_history | grep -q '^Done\.' || fail "the last reply is gone after leaving"

# Ctrl-Z and fg, from an interactive shell with job control
for mode in "--tui" ""; do
    t_start "PS1='$ ' exec bash --norc --noprofile -i"
    t_wait '^\$ ?$' 10
    t_send "$T_CHAT $mode -m $model -n 8"
    if [ -n "$mode" ]; then t_wait_status 'ready' 30; else t_prompt 30; fi
    t_type "typed so far"
    t_wait '^(>|>>>) typed so far$' 10
    t_keys C-z
    t_wait 'Stopped' 10
    t_send "fg"
    if [ -n "$mode" ]; then t_wait_status 'ready' 10; fi
    t_wait '^(>|>>>) typed so far$' 10
    t_keys C-u C-d
    t_wait '^\$ ?$' 10
done
t_done
