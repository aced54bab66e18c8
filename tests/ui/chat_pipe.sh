#!/bin/sh
# Scripting: one message per line of stdin (or --whole, or -p), only the
# replies on stdout, an exit status per kind of error; --help; the config
# file.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
out=$T_DIR/out err=$T_DIR/err
STATS='^prompt [0-9]+ tok'

printf 'Hello.\nTell me about a cat.\nThe end.\n' | $T_CHAT -m "$model" -n 12 --verbose >"$out" 2>"$err"
rc=$?
[ $rc -eq 0 ] || fail "3 lines: exit status $rc"
[ "$(grep -Ec "$STATS" "$err")" -eq 3 ] || fail "3 lines: not 3 replies: $(cat "$err")"
[ -s "$out" ] || fail "3 lines: no reply on stdout"
grep -Eq "$STATS|loaded|confab " "$out" && fail "3 lines: more than replies on stdout"
# without --verbose stderr stays empty
printf 'Hi.\n' | $T_CHAT -m "$model" -n 4 >"$out" 2>"$err" || fail "no --verbose: failed"
[ -s "$err" ] && fail "no --verbose: stderr has: $(cat "$err")"

printf 'One message\nin two lines.\n' | $T_CHAT -m "$model" -n 6 --verbose --whole >"$out" 2>"$err"
[ "$(grep -Ec "$STATS" "$err")" -eq 1 ] || fail "--whole: not one reply"
$T_CHAT -m "$model" -n 6 -p "Once upon a time" >"$out" 2>"$err" </dev/null
[ $? -eq 0 ] && [ -s "$out" ] || fail "-p: no reply"
# slash commands work in scripts; their output goes to stderr
printf '/set temp 0\n/show settings\nHello.\n' | $T_CHAT -m "$model" -n 4 >"$out" 2>"$err"
grep -Eq '^temp +0$' "$err" || fail "/show settings in a script: $(cat "$err")"
# llama-cli's spellings of the options: -sys, --system-prompt, --predict, -s
printf '/show settings\n' | $T_CHAT -m "$model" -sys "Be brief." --predict 3 -s 7 >"$out" 2>"$err"
grep -Eq '^system +"Be brief\."$' "$err" && grep -Eq '^n-predict +3$' "$err" && grep -Eq '^seed +7$' "$err" ||
    fail "llama-cli's option names: $(cat "$err")"
printf '/show settings\n' | $T_CHAT -m "$model" --system-prompt "Be kind." >"$out" 2>"$err"
grep -Eq '^system +"Be kind\."$' "$err" || fail "--system-prompt: $(cat "$err")"

# exit statuses, each with one error line
expect() { # expect STATUS PATTERN CMD...
    want=$1 pat=$2
    shift 2
    "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    [ $rc -eq "$want" ] || fail "$*: exit status $rc, not $want"
    [ "$(wc -l <"$err")" -eq 1 ] && grep -Eq "$pat" "$err" || fail "$*: stderr: $(cat "$err")"
}
expect 2 "^confab: --temp: 'hot' is not a number from 0 to 100$" $T_CHAT -m "$model" --temp hot -p x
expect 2 "^confab: unknown option '--frobnicate'" $T_CHAT --frobnicate
expect 2 "^confab: --kv-type: 'q9' is not f16, q8_0, q4_0, bf16 or f32$" $T_CHAT --kv-type q9 -p x
expect 2 "^confab: --cache-type-k: 'q9' is not f16, q8_0, q4_0, bf16 or f32$" $T_CHAT -ctk q9 -p x
expect 2 "^confab: --temp: " $T_CHAT -m "$model" --temp -3 -p x
expect 2 "^confab: --tui needs a terminal" $T_CHAT -m "$model" --tui
expect 2 "presets: .*storyteller" $T_CHAT -m "$model" --system-file no-such-preset -p x
expect 2 "^confab: --chat-template: no built-in template 'nosuch'" $T_CHAT -m "$model" --chat-template nosuch -p x
expect 2 "^confab: --chat-template-file: cannot read " $T_CHAT -m "$model" --chat-template-file "$T_DIR/none.jinja" -p x
expect 3 "^confab: " $T_CHAT -m "$T_DIR/missing.gguf" -p x
printf 'junk' >"$T_DIR/junk.session"
expect 4 "^confab: " $T_CHAT -m "$model" --session "$T_DIR/junk.session" -p x
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "word "; print "" }' >"$T_DIR/long.txt"
$T_CHAT -m "$model" -c 256 <"$T_DIR/long.txt" >"$out" 2>"$err"
rc=$?
[ $rc -eq 5 ] && grep -q 'context' "$err" || fail "too long: exit status $rc, stderr $(cat "$err")"
printf '/frobnicate\nHello.\n' | $T_CHAT -m "$model" -n 4 >"$out" 2>"$err"
[ $? -eq 2 ] || fail "an unknown command in a script does not fail"
# no model anywhere: the one message saying where to put one
$T_CHAT -p x >"$out" 2>"$err" </dev/null
[ $? -eq 3 ] && grep -q 'no model given' "$err" || fail "no model: $(cat "$err")"
# a preset by name
$T_CHAT -m "$model" -n 4 --system-file storyteller -p "Hi" >"$out" 2>"$err" || fail "--system-file storyteller"

# the model and template options reach the session
for args in "-m $T_MODELS/stories260K.bin --tokenizer $T_MODELS/tok512.bin" \
    "-m $model --chat-template llama2" "-m $model --kv-type f32 -c 256" \
    "-m $model --chat-template-file $CONFAB_SHARED/templates/Qwen-Qwen2.5-7B-Instruct.jinja"; do
    printf '/show template\n/show model\nHi.\n' | $T_CHAT $args -n 4 >"$out" 2>"$err" || fail "$args: $(cat "$err")"
    [ -s "$out" ] || fail "$args: no reply"
done
printf '/show template\n' | $T_CHAT -m "$model" --chat-template llama2 2>&1 | grep -q '^template: llama2 (built-in)$' ||
    fail "--chat-template is not used"
printf '/show model\n' | $T_CHAT -m "$model" -c 256 2>&1 | grep -q '^context    256 ' || fail "-c is not used"
# no colour when not on a terminal
printf 'Hi.\n/show settings\n' | $T_CHAT -m "$model" -n 4 --verbose >"$out" 2>"$err"
grep -q "$(printf '\033')" "$out" "$err" && fail "escape sequences in a pipe"

# --help, grouped
for cmd in "--help" "chat --help"; do
    "$T_BIN" $cmd >"$out" 2>&1 || fail "confab $cmd failed"
    for g in '^Model:' '^Sampling' '^Conversation:' '^Interface:' '--top-k N' '--autosave'; do
        grep -Eq -- "$g" "$out" || fail "confab $cmd lacks '$g'"
    done
done

# a reply with no text at all (-n 0): nothing printed, the chat goes on
# (a fuzzer found undefined behaviour here: an offset on a NULL buffer)
printf 'Hi.\nAgain.\n' | $T_CHAT -m "$model" -n 0 >"$out" 2>"$err" || fail "-n 0: failed: $(cat "$err")"
[ ! -s "$out" ] || fail "-n 0 printed '$(cat "$out")'"

# the config file sets defaults; a bad line is one error naming file:line
mkdir -p "$XDG_CONFIG_HOME/confab"
printf 'n-predict = 3\ntmep = 1\nmodel = %s\n' "$model" >"$XDG_CONFIG_HOME/confab/config"
printf 'Hello.\n' | $T_CHAT --verbose >"$out" 2>"$err"
[ $? -eq 0 ] || fail "config: the run did not go on"
grep -q "^confab: $XDG_CONFIG_HOME/confab/config:2: unknown key 'tmep'" "$err" || fail "config: $(cat "$err")"
grep -Eq 'reply [0-3] tok' "$err" || fail "config: n-predict not applied: $(cat "$err")"
t_done
