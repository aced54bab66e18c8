#!/bin/sh
# A Qwen3 file with the real Qwen3 vocabulary chats with the template in
# its GGUF (the Jinja one, <think> handling and all): the first turn's
# prompt is exactly the 10 tokens of
#   <|im_start|>user\nHello.<|im_end|>\n<|im_start|>assistant\n
# and a second turn reuses the cache and prefills only what is new.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/qwen3-bpe.Q8_0.gguf
[ -f "$model" ] || { echo "no $model: skipped"; exit 77; }
STATS='^prompt [0-9]+ tok, [0-9.]+ t/s · reply [0-9]+ tok'

t_start "$T_CHAT -m $model -n 8 --seed 3"
t_wait '^loaded qwen3-bpe.Q8_0.gguf' 30
t_prompt
t_send "/show template"
# its label, then its text (which scrolls the label off the screen)
t_wait_count '^template: jinja \(from GGUF\)$' 1 10
t_wait '^\(/show template --rendered: what it renders for the next turn\)$' 10
t_prompt
t_send "Hello."
t_wait '^prompt 10 tok, ' 30
t_prompt
t_send "And you?"
t_wait_count "$STATS" 2 30
t_prompt
# the second prompt: the first reply's end (<|im_end|>\n) and the new
# user turn, not the whole conversation again
second=$(t_history | grep -E "$STATS" | sed -n 2p | sed -E 's/^prompt ([0-9]+) tok.*/\1/')
[ -n "$second" ] && [ "$second" -lt 20 ] || fail "second turn prefilled $second tokens"
t_send "/show context"
t_wait '^context: [0-9]+ / [0-9]+ tokens used \([0-9]+%\), 4 messages$' 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS after Ctrl-D"
t_done
