#!/bin/sh
# deepseek2's latent-attention cache in the chat, greedy: /undo then the
# same message, and /regen, give the reply of the uninterrupted chat; a
# session saved after two turns and resumed in a new process gives the
# third reply of the uninterrupted chat; a full context shifts (the rope
# part of each cached row re-rotated) and the chat goes on; and the REPL
# chats with one, /regen and /switch between the branches reusing the cache.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
# Compared as bytes, not lines: a random model's reply may hold newlines.
for name in deepseek2-lite.F32 deepseek2-v3.Q8_0; do
    model=$T_MODELS/$name.gguf
    [ -f "$model" ] || { echo "no $model: skipped"; exit 77; }
    run() { $T_CHAT -m "$model" -n 10 --temp 0 "$@" 2>/dev/null; }
    printf 'Hello.\n' | run >"$T_DIR/one.txt" || fail "$name: the chat failed"
    printf 'Hello.\nTell me more.\n' | run >"$T_DIR/two.txt" || fail "$name: the chat failed"
    printf 'Hello.\nTell me more.\nAnd then?\n' | run >"$T_DIR/three.txt" || fail "$name: the chat failed"
    # the second reply: two.txt after one.txt's bytes
    tail -c +$(($(wc -c <"$T_DIR/one.txt") + 1)) "$T_DIR/two.txt" >"$T_DIR/reply2.txt"
    cat "$T_DIR/two.txt" "$T_DIR/reply2.txt" >"$T_DIR/want.txt"
    printf 'Hello.\nTell me more.\n/undo\nTell me more.\n' | run >"$T_DIR/undo.txt" ||
        fail "$name: /undo failed"
    cmp -s "$T_DIR/undo.txt" "$T_DIR/want.txt" || fail "$name: the reply after /undo differs"
    printf 'Hello.\nTell me more.\n/regen\n' | run >"$T_DIR/regen.txt" || fail "$name: /regen failed"
    cmp -s "$T_DIR/regen.txt" "$T_DIR/want.txt" || fail "$name: the reply after /regen differs"
    printf 'Hello.\nTell me more.\n/save %s\n' "$T_DIR/$name.session" | run >/dev/null ||
        fail "$name: the first part failed"
    printf 'And then?\n' | run --session "$T_DIR/$name.session" >"$T_DIR/resumed.txt" ||
        fail "$name: the resumed chat failed"
    cat "$T_DIR/two.txt" "$T_DIR/resumed.txt" | cmp -s - "$T_DIR/three.txt" || fail "$name: the resumed reply differs"
done

printf 'Once upon a time there was a girl.\nTell me more please.\nAnd then?\n' |
    $T_CHAT -m "$T_MODELS/deepseek2-lite.Q8_0.gguf" -c 64 -n 20 --temp 0 >"$T_DIR/out.txt" 2>"$T_DIR/err.txt" ||
    fail "the chat with shifts failed: $(cat "$T_DIR/err.txt")"
grep -q "context full: the oldest [0-9]* tokens were dropped" "$T_DIR/err.txt" ||
    fail "no shift message: $(cat "$T_DIR/err.txt")"
[ "$(wc -l <"$T_DIR/out.txt")" -ge 3 ] || fail "the chat stopped at the shift: $(cat "$T_DIR/out.txt")"

t_hello_regen deepseek2-v3.Q8_0
t_send "/switch main"
t_wait '^switched to branch 1 main \(2 messages\): [0-9]+ tokens reused from the cache, [0-9]+ prefilled$' 10
t_prompt
t_send "/quit"
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS after /quit"
t_done
