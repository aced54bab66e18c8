#!/bin/sh
# Mixture-of-experts files in the chat: two turns in the REPL, and a
# session saved after two turns and resumed in a new process gives the
# third reply of the uninterrupted chat (greedy), for each MoE family.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok, [0-9.]+ t/s · reply [0-9]+ tok'
for name in qwen3moe.Q8_0 mixtral.Q8_0 gpt-oss.MXFP4_MOE; do
    model=$T_MODELS/$name.gguf
    [ -f "$model" ] || { echo "no $model: skipped"; exit 77; }
    printf 'Hello.\nTell me more.\nAnd then?\n' | $T_CHAT -m "$model" -n 12 --temp 0 >"$T_DIR/all.txt" ||
        fail "$name: the uninterrupted chat failed"
    printf 'Hello.\nTell me more.\n/save %s\n' "$T_DIR/$name.session" |
        $T_CHAT -m "$model" -n 12 --temp 0 >/dev/null 2>&1 || fail "$name: the first part failed"
    printf 'And then?\n' | $T_CHAT -m "$model" -n 12 --temp 0 --session "$T_DIR/$name.session" \
        >"$T_DIR/resumed.txt" || fail "$name: the resumed chat failed"
    # the third reply ends the output; it may hold newlines
    third=$(tail -n "$(wc -l <"$T_DIR/resumed.txt")" "$T_DIR/all.txt")
    [ "$third" = "$(cat "$T_DIR/resumed.txt")" ] ||
        fail "$name: resumed reply '$(cat "$T_DIR/resumed.txt")' is not '$third'"
done

t_start "$T_CHAT -m $T_MODELS/qwen3moe.Q8_0.gguf -n 8 --seed 5"
t_wait '^loaded qwen3moe.Q8_0.gguf' 30
t_prompt
t_send "Hello."
t_wait_count "$STATS" 1 30
t_prompt
t_send "Tell me more."
t_wait_count "$STATS" 2 30
t_prompt
t_send "/show context"
t_wait '4 messages$' 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS after Ctrl-D"
t_done
