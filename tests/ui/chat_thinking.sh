#!/bin/sh
# A reasoning model in line mode and in scripts (the Qwen3 vocabulary and
# template, replies scripted with CONFAB_TEST_REPLIES): the thinking
# streams dim, the answer after it, then the folded one-line summary;
# /set show-thinking off hides it (a note points to /show thinking);
# /show thinking [N]; /set thinking off changes what /show prompt renders;
# a reply cut inside its thinking says so; thinking, its setting and the
# replay survive --session; NO_COLOR marks the block instead; a script
# prints only the answers, --show-thinking adds the thinking on stderr;
# GLM-4.6's template the same.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/qwen3-bpe.Q8_0.gguf
[ -f "$model" ] || { echo "no $model: skipped"; exit 77; }
replies=$T_DIR/replies.txt
cat >"$replies" <<'EOF'
<think>\nSeven times six is forty-two.\n</think>\n\n42.
<think>\nSeven sevens.\n</think>\n\n49.
<think>\nOne two three four five six seven eight nine ten
<think>\nBack.\n</think>\n\nHello again.
EOF
SUMMARY='^thought for [0-9]+ tokens, [0-9.]+ s'
ESC=$(printf '\033')

t_start "CONFAB_TEST_REPLIES=$replies $T_CHAT -m $model --seed 3"
t_prompt 30
t_send "What is 7 * 6?"
t_wait "$SUMMARY\$" 30
t_wait '^42\.$' 5
t_wait '^prompt [0-9]+ tok, [0-9.]+ t/s · reply [0-9]+ tok \([0-9]+ thinking\), ' 5
# the thinking is dim, on its own lines before the answer
tm capture-pane -t t -p -e | grep -q "${ESC}\[2mSeven times six is forty-two\." ||
    fail "the thinking is not dim"
t_history | grep -B1 '^42\.$' | head -n 1 | grep -q '^Seven times six is forty-two\.$' ||
    fail "the thinking does not come right before the answer"

t_send "/set show-thinking off"
t_wait '^show-thinking = off$' 10
t_send "And 7 * 7?"
t_wait "$SUMMARY · /show thinking\$" 30
t_wait '^49\.$' 5
t_count '^Seven sevens\.$' | grep -q '^0$' || fail "hidden thinking was shown"
t_send "/show thinking"
t_wait '^thinking of reply 2:$' 10
t_wait '^Seven sevens\.$' 5
t_send "/show thinking 1"
t_wait '^thinking of reply 1:$' 10
t_send "/show thinking 9"
t_wait "^error: /show thinking: no reply '9' \\(replies 1 to 2\\)\$" 10

# the next turn's prompt: earlier thinking dropped, as Qwen3's template does
t_send "/show prompt Next"
t_wait '^\([0-9]+ tokens: [0-9]+ in the cache, [0-9]+ to evaluate\)$' 10
t_history | grep -A1 -xF '<|im_start|>assistant' | grep -qxF '42.<|im_end|>' ||
    fail "/show prompt: the first reply is not rendered without its thinking"
t_send "/set thinking off"
t_wait '^thinking = off$' 10
t_send "/show prompt Next"
t_wait_count '^\([0-9]+ tokens: ' 2 10
t_history | tail -n 8 | grep -q '^</think>$' ||
    fail "/show prompt after /set thinking off has no closed <think> block"

# a reply cut inside its thinking keeps it, marked
t_send "/set n-predict 5"
t_send "Count."
t_wait "$SUMMARY, cut off · /show thinking\$" 30
t_send "/show thinking"
t_wait '^thinking of reply 3 \(cut off\):$' 10
t_wait '^One two three$' 5
t_send "/save $T_DIR/think.session"
t_wait "^saved to $T_DIR/think.session\$" 10
t_send "/bye"
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS"

# resumed: the thinking is replayed (shown again by default), the setting kept
t_start "NO_COLOR=1 $T_CHAT -m $model --session $T_DIR/think.session"
t_wait '^>>> Count\.$' 30
t_prompt
t_history | grep -A2 '^>>> And 7 \* 7?$' | tr '\n' '|' | grep -q '^>>> And 7 \* 7?|\[thinking\]|Seven sevens\.|$' ||
    fail "the replay lacks the marked thinking of reply 2"
t_send "/show settings"
t_wait '^thinking +off$' 10
t_send "/show thinking 1"
t_wait '^thinking of reply 1:$' 10
t_send "/set thinking auto"
t_wait '^thinking = auto$' 10
t_keys C-d
t_wait_exit 30

# without colour the thinking is a marked block
printf '%s\n' '<think>\nPlain thought.\n</think>\n\nPlain answer.' >"$T_DIR/one.txt"
t_start "NO_COLOR=1 CONFAB_TEST_REPLIES=$T_DIR/one.txt $T_CHAT -m $model"
t_prompt 30
t_send "Hi."
t_wait "$SUMMARY\$" 30
t_history | grep -A4 '^>>> Hi\.$' | tr '\n' '|' |
    grep -q '^>>> Hi\.|\[thinking\]|Plain thought\.|\[/thinking\]|Plain answer\.|$' ||
    fail "NO_COLOR: no marked block: $(t_history | grep -A4 '^>>> Hi')"
t_keys C-d
t_wait_exit 30

# GLM-4.6's template: the reply opens with a newline before its block,
# shown dim and folded as the others'
printf '%s\n' '\n<think>GLM weighs it.</think>\nGLM answers.' >"$T_DIR/glm.txt"
glm=$CONFAB_SHARED/templates/2026/GLM-4.6.jinja
t_start "CONFAB_TEST_REPLIES=$T_DIR/glm.txt $T_CHAT -m $model --chat-template-file $glm"
t_prompt 30
t_send "Hi."
t_wait "$SUMMARY\$" 30
t_wait '^GLM answers\.$' 5
tm capture-pane -t t -p -e | grep -q "${ESC}\[2mGLM weighs it\." || fail "GLM: the thinking is not dim"
t_keys C-d
t_wait_exit 30

# scripts: the answers alone on stdout; --show-thinking puts the thinking on stderr
out=$T_DIR/out err=$T_DIR/err
printf 'a\nb\n' | CONFAB_TEST_REPLIES=$replies $T_CHAT -m "$model" >"$out" 2>"$err" ||
    fail "script: exit status $?"
[ "$(cat "$out")" = "$(printf '42.\n49.')" ] || fail "script stdout: $(cat "$out")"
[ -s "$err" ] && fail "script stderr: $(cat "$err")"
printf 'a\n' | CONFAB_TEST_REPLIES=$replies $T_CHAT -m "$model" --show-thinking >"$out" 2>"$err"
[ "$(cat "$out")" = "42." ] || fail "--show-thinking stdout: $(cat "$out")"
[ "$(cat "$err")" = "$(printf '[thinking]\nSeven times six is forty-two.\n[/thinking]')" ] ||
    fail "--show-thinking stderr: $(cat "$err")"
t_done
