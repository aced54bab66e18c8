#!/bin/sh
# -ngl / --gpu-layers and --device in chat, complete, bench and serve's
# parser, and confab devices: with a Vulkan device (lavapipe here) the
# layers run there and the load says so in one line; without one, that
# line says why and the chat runs on the CPU.  A session saved with the
# GPU resumes on the CPU and back.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
out=$T_DIR/out err=$T_DIR/err

$T_BIN devices >"$out" 2>"$err" || fail "devices: exit status $?"
if grep -q '^#  *name  *type  *memory  *subgroup  *coopmat$' "$out"; then
    gpu=1
    grep -Eq '^0  +.+ (discrete|integrated|virtual|cpu|other) +[0-9.]+ GiB +[0-9]+ +(yes|no)$' "$out" ||
        fail "devices: $(cat "$out")"
    note='^confab: offloaded 5/5 layers and the output to '
else
    gpu=0
    [ "$(wc -l <"$out")" -eq 1 ] || fail "devices without a GPU: $(cat "$out")"
    note='; running on the CPU$'
fi

expect() { # expect STATUS PATTERN CMD...
    want=$1 pat=$2
    shift 2
    "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    [ $rc -eq "$want" ] || fail "$*: exit status $rc, not $want"
    [ "$(wc -l <"$err")" -eq 1 ] && grep -Eq "$pat" "$err" || fail "$*: stderr: $(cat "$err")"
}
expect 2 "^confab: --gpu-layers: 'x' is not an integer" $T_CHAT -m "$model" -ngl x -p x
expect 2 '^confab: --device: -1 is out of range' $T_CHAT -m "$model" --device -1 -p x
expect 2 "^confab: --gpu-layers: " $T_BIN complete -m "$model" -ngl many -p x
expect 2 "^confab: --gpu-layers: " $T_BIN bench -m "$model" -ngl -2
expect 2 "^confab: --gpu-layers: " $T_BIN serve -m "$model" --gpu-layers x
expect 2 "^confab: unexpected argument" $T_BIN devices extra

# one line on how it went, then the reply; all and 99 say the same
for n in 99 all; do
    expect 0 "$note" $T_CHAT -m "$model" -ngl $n -n 6 -p "Once upon a time"
    [ -s "$out" ] || fail "-ngl $n: no reply"
done
expect 0 "$note" $T_BIN complete -m "$model" -ngl 99 -n 6 -p "Once upon a time"
[ -s "$out" ] || fail "complete -ngl 99: no text"
if [ $gpu = 1 ]; then
    expect 0 '^confab: offloaded 2/5 layers to ' $T_CHAT -m "$model" --gpu-layers 2 -n 4 -p "Hi"
    # a device past the list: said, and the chat runs on the CPU
    expect 0 '; running on the CPU$' $T_CHAT -m "$model" -ngl 99 --device 7 -n 4 -p "Hi"
fi

# a session saved with the GPU resumes on the CPU, and back
s=$T_DIR/gpu.session
printf 'Hello.\n' | $T_CHAT -m "$model" -ngl 99 -n 4 --session "$s" >"$out" 2>"$err" || fail "save: $(cat "$err")"
[ -s "$s" ] || fail "no session file"
printf 'And then?\n' | $T_CHAT -m "$model" -n 4 --session "$s" >"$out" 2>"$err" || fail "on the CPU: $(cat "$err")"
printf '/show context\nMore.\n' | $T_CHAT -m "$model" -ngl 99 -n 4 --session "$s" >"$out" 2>"$err" ||
    fail "back on the GPU: $(cat "$err")"
[ -s "$out" ] || fail "back on the GPU: no reply"
t_done
