#!/bin/sh
# The first run on a model not trained to chat (make chat's tiny story
# model): under the banner, why it does not look chat-trained, where its
# replies stop (256 tokens unless -n says otherwise) and how to get a chat
# model; the cap holds in line mode, full screen and scripts (where
# --verbose shows the note).  A chat model gets no note and no cap.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
STATS='^prompt [0-9]+ tok, [0-9.]+ t/s · reply [0-9]+ tok'
WHY='^This model does not look chat-trained: its vocabulary has no <\|im_end\|> token\.$'
CAP='^Replies stop after 256 tokens \(-n N or /set n-predict N to change\)\.$'
HOW="^For a chat model, 'confab models' lists those you have; or 'ollama pull qwen3:0\.6b'\$"

t_start "$T_CHAT -m $model --seed 1"
t_wait "$WHY" 30
t_wait "$CAP" 5
t_wait "$HOW" 5
t_wait '^Qwen/Qwen3-0\.6B-GGUF or bartowski/SmolLM2-135M-Instruct-GGUF\.$' 5
t_prompt
# the note comes right under the banner
t_history | grep -A1 '^confab [0-9.]* · llama · context' | tail -n 1 | grep -Eq "$WHY" ||
    fail "the note is not under the banner"
t_send "Tell me a story."
t_wait "$STATS" 60
t_prompt
n=$(t_history | grep -E "$STATS" | sed -E 's/.* reply ([0-9]+) tok.*/\1/')
[ "$n" -le 256 ] || fail "a reply of $n tokens"
t_send "/show settings"
t_wait '^n-predict +256$' 10
t_keys C-d
t_wait_exit 30

# -n wins, and the note says so; with no limit only why and how
t_start "$T_CHAT -m $model -n 32"
t_wait '^Replies stop after 32 tokens' 30
t_prompt
t_keys C-d
t_wait_exit 30
t_start "$T_CHAT -m $model -n -1"
t_wait "$HOW" 30
t_prompt
t_count '^Replies stop after' | grep -qx 0 || fail "-n -1: still a cap"
t_keys C-d
t_wait_exit 30

# no chat template in the file: the template is a guess
t_start "$T_CHAT -m $T_MODELS/stories260K.gguf"
t_wait '^This model does not look chat-trained: its file has no chat template \(chatml is a guess\)\.$' 30
t_prompt
t_keys C-d
t_wait_exit 30

# full screen: the same lines under its banner
t_start "$T_CHAT --tui -m $model"
t_wait 'This model does not look chat-trained' 30
t_wait 'Replies stop after 256 tokens' 5
t_keys C-d
t_wait_exit 30

# a chat model (its template's <|im_end|> is a token): no note, no cap
qwen=$T_MODELS/qwen3-bpe.Q8_0.gguf
if [ -f "$qwen" ]; then
    t_start "$T_CHAT -m $qwen"
    t_prompt 30
    t_count 'chat-trained|Replies stop' | grep -qx 0 || fail "a chat model got the note"
    t_send "/show settings"
    t_wait '^n-predict +-1$' 10
    t_keys C-d
    t_wait_exit 30
fi

# scripts: the same cap; the note only with --verbose, on stderr
out=$T_DIR/out err=$T_DIR/err
$T_CHAT -m "$model" -p "Tell me a story." --seed 1 >"$out" 2>"$err" </dev/null || fail "-p: failed"
[ -s "$err" ] && fail "-p: stderr has: $(cat "$err")"
$T_CHAT -m "$model" -p "Tell me a story." --seed 1 --verbose >"$out" 2>"$err" </dev/null
grep -Eq "$WHY" "$err" && grep -Eq "$CAP" "$err" || fail "--verbose: no note: $(cat "$err")"
n=$(grep -E "$STATS" "$err" | sed -E 's/.* reply ([0-9]+) tok.*/\1/')
[ -n "$n" ] && [ "$n" -le 256 ] || fail "-p: a reply of '$n' tokens"
grep -q 'This model' "$out" && fail "the note reached stdout"
t_done
