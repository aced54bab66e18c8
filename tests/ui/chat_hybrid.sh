#!/bin/sh
# Models with recurrent layers (Qwen3.5's and Qwen3-Next's delta nets, LFM2's short
# convolutions, Granite 4.0-H's and Nemotron-H's Mamba2) in the chat,
# greedy: /undo then the same message, and /regen, give the reply of the
# uninterrupted chat (the state goes back to a checkpoint and the tokens
# after it are evaluated again); a session saved after two turns and
# resumed in a new process gives the third reply of the uninterrupted
# chat; a context shift says the kept tokens were evaluated again; and
# the REPL chats with one.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
for name in qwen35.F32 qwen35moe.Q8_0 lfm2.F32 lfm2moe.Q8_0 qwen3next.F32 granitehybrid.F32 nemotron_h_moe.Q8_0; do
    model=$T_MODELS/$name.gguf
    [ -f "$model" ] || { echo "no $model: skipped"; exit 77; }
    run() { $T_CHAT -m "$model" -n 10 --temp 0 "$@"; }
    printf 'Hello.\nTell me more.\nAnd then?\n' | run >"$T_DIR/all.txt" || fail "$name: the chat failed"
    printf 'Hello.\nTell me more.\n/undo\nTell me more.\n/regen\n' | run >"$T_DIR/undo.txt" 2>/dev/null ||
        fail "$name: /undo, /regen failed"
    two=$(sed -n 2p "$T_DIR/all.txt")
    [ "$(sed -n 3p "$T_DIR/undo.txt")" = "$two" ] || fail "$name: the reply after /undo differs"
    [ "$(sed -n 4p "$T_DIR/undo.txt")" = "$two" ] || fail "$name: the reply after /regen differs"
    printf 'Hello.\nTell me more.\n/save %s\n' "$T_DIR/$name.session" | run >/dev/null 2>&1 ||
        fail "$name: the first part failed"
    printf 'And then?\n' | run --session "$T_DIR/$name.session" >"$T_DIR/resumed.txt" ||
        fail "$name: the resumed chat failed"
    [ "$(sed -n 3p "$T_DIR/all.txt")" = "$(cat "$T_DIR/resumed.txt")" ] ||
        fail "$name: the resumed reply differs"
done

printf 'Once upon a time there was a girl.\nTell me more please.\nAnd then?\n' |
    $T_CHAT -m "$T_MODELS/qwen35.Q8_0.gguf" -c 64 -n 20 --temp 0 >/dev/null 2>"$T_DIR/err.txt" ||
    fail "the chat with shifts failed: $(cat "$T_DIR/err.txt")"
grep -q "tokens were dropped (the rest was evaluated again" "$T_DIR/err.txt" ||
    fail "no shift message for a recurrent model: $(cat "$T_DIR/err.txt")"

t_hello_regen qwen35.Q8_0
t_send "/show context"
t_wait '2 messages$' 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS after Ctrl-D"
t_done
