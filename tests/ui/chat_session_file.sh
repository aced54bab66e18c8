#!/bin/sh
# A session named on the command line: saved after each turn (a crash
# then loses nothing said) and on leaving, an empty file is a new session,
# no -m loads the model the file was saved with (or says which it wants
# and where it looked), another model's -m is refused naming the model and
# --session-any-model, which brings the transcript.  Leaving a chat that
# no file keeps says how to keep one.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
other=$T_MODELS/stories260K-llama2chat.gguf
STATS='^prompt [0-9]+ tok'
S=$T_DIR/work/new.session

# a new file: there after the first reply, before leaving
t_start "$T_CHAT -m $model -n 6 --session $S"
t_prompt 30
t_send "hello"
t_wait_count "$STATS" 1 30
t_prompt
[ -s "$S" ] || fail "no $S after the first reply"
t_send "and again"
t_wait_count "$STATS" 2 30
t_prompt
# what a crash now would leave: both turns, and it loads without -m
cp "$S" "$T_DIR/two.session"
t_keys C-d
t_wait_exit 30
n=$(echo "/show context" | $T_BIN -t 1 --session "$T_DIR/two.session" 2>&1)
echo "$n" | grep -q ', 4 messages$' || fail "the file saved after the second reply: '$n'"

# no -m: the model it was saved with; the conversation is shown
t_start "$T_CHAT --session $S -n 6"
t_wait '^>>> hello$' 30
t_wait '^>>> and again$' 5
t_wait "stories260K" 5
t_prompt
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "resumed chat: exit status $T_STATUS"
t_screen | grep -q 'not saved' && fail "a --session chat says it was not saved"

# an empty file is a new session, saved on leaving
: >"$T_DIR/work/empty.session"
t_start "$T_CHAT -m $model -n 4 --session $T_DIR/work/empty.session"
t_prompt 30
t_screen | grep -q 'error' && fail "an empty session file is refused: $(t_screen)"
t_send "hi"
t_wait_count "$STATS" 1 30
t_prompt
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] && [ -s "$T_DIR/work/empty.session" ] || fail "empty.session: $T_STATUS"

# leaving unsaved: one line saying how to keep it
t_start "$T_CHAT -m $model -n 4"
t_prompt 30
t_send "hi"
t_wait_count "$STATS" 1 30
t_prompt
t_keys C-d
t_wait '^this conversation was not saved \(/save FILE before leaving keeps it; --session FILE saves as you go\)$' 10
t_wait_exit 30

# the model it wants is gone: one line naming it and where it looked
cp "$model" "$T_DIR/gone.gguf"
$T_BIN -t 1 -m "$T_DIR/gone.gguf" --session "$T_DIR/gone.session" -n 1 -p hi >/dev/null 2>&1 ||
    fail "gone.session not made"
rm "$T_DIR/gone.gguf"
msg=$($T_BIN -t 1 --session "$T_DIR/gone.session" -p hi 2>&1 >/dev/null); rc=$?
[ $rc = 3 ] && [ "$(echo "$msg" | wc -l)" = 1 ] &&
    echo "$msg" | grep -q "was saved with the model 'llama', not at $T_DIR/gone.gguf" ||
    fail "the model is gone: rc $rc, '$msg'"

# another model: refused, naming the model and the way around
cp "$S" "$T_DIR/any.session"
msg=$($T_BIN -t 1 -m "$other" --session "$T_DIR/any.session" -p hi 2>&1 >/dev/null); rc=$?
[ $rc = 4 ] && echo "$msg" | grep -qF "another model, 'llama' ($(realpath "$model")), not this one" &&
    echo "$msg" | grep -q -- "--session-any-model" || fail "another model: rc $rc, '$msg'"
t_start "$T_CHAT -m $other -n 4 --session $T_DIR/any.session --session-any-model"
t_wait '^>>> and again$' 30
t_prompt
t_send "/show context"
t_wait ', 4 messages$' 10
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "--session-any-model: exit status $T_STATUS"
t_done
