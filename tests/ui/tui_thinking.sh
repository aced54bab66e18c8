#!/bin/sh
# Full-screen mode with a reasoning model (the Qwen3 vocabulary and
# template, replies scripted with CONFAB_TEST_REPLIES): the thinking
# streams as a block under "thinking..." while the status bar says
# "thinking…", then the answer; the header says how long it thought and
# the status bar counts thinking and answer tokens; F3 folds the block to
# its header and unfolds it (also while a reply streams), and so does
# /set show-thinking.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/qwen3-bpe.Q8_0.gguf
[ -f "$model" ] || { echo "no $model: skipped"; exit 77; }
replies=$T_DIR/replies.txt
cat >"$replies" <<'EOF'
<think>\nFirst I add one and one.\nThen I check the sum twice, slowly, to be sure of it, counting on my fingers and then on my toes, and once more on an abacus borrowed from a friend who counts sheep.\nStill thinking about it.\n</think>\n\nTwo.
<think>\nQuick.\n</think>\n\nThree.
EOF

# (wide enough for the status bar to keep the last reply's thinking beside the model's long name)
T_COLS=140 t_start "CONFAB_TEST_TOKEN_DELAY_MS=60 CONFAB_TEST_REPLIES=$replies $T_CHAT --tui -m $model"
t_wait_status 'ready' 30
t_send "What is 1 + 1?"
t_wait '^▾ thinking\.\.\.  \(F3 folds it\)$' 10
t_wait_status '● thinking…' 10
t_wait '^First I add one and one\.$' 10
# folded while it streams: the header alone
t_keys F3
t_wait '^▸ thinking\.\.\.  \(F3 shows it\)$' 10
t_screen_has '^First I add one' && fail "F3 did not fold the streaming thinking"
t_keys F3
t_wait '^▾ (thinking\.\.\.|thought for )' 10
t_wait '^Two\.$' 30
t_wait '^▾ thought for [0-9]+ tokens, [0-9.]+ s  \(F3 folds it\)$' 10
t_wait_status 'ready .*│ think [0-9]+ · answer [0-9]+' 10
t_screen_has '^Still thinking about it\.$' || fail "the unfolded block lacks its last line"

t_keys F3
t_wait '^▸ thought for [0-9]+ tokens, [0-9.]+ s  \(F3 shows it\)$' 10
t_screen_has '^First I add one' && fail "the folded block still shows its text"
t_send "/show settings"
t_wait '^show-thinking +off$' 10
t_send "/set show-thinking on"
t_wait '^show-thinking = on$' 10
t_wait '^▾ thought for ' 5
t_send "/set show-thinking off"
t_wait '^show-thinking = off$' 10
t_send "And 1 + 2?"
t_wait '^Three\.$' 30
t_wait_count '^▸ thought for ' 2 10
t_screen_has '^Quick\.$' && fail "a new reply's thinking shows while folded"
t_send "/show thinking 2"
t_wait '^Quick\.$' 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS, not 0"
t_terminal_restored
t_done
