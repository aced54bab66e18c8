#!/bin/sh
# Values as a person types them: every yes/no setting takes
# on/off/1/0/yes/no/true/false; a value out of range has one wording on
# the command line, in the config file and after /set; repeat-last-n -1
# is the whole context; -t beyond the CPUs is capped with one line; a
# missing value, an empty -p and -n 0 are said; a character cut short is
# one invalid sequence; Tab completes values.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
STATS='^prompt [0-9]+ tok'

t_start "$T_CHAT -m $model -n 4 -c 256"
t_prompt 30
t_send "/set probs 1"
t_wait '^probs = on$' 10
t_send "/set markdown yes"
t_wait '^markdown = on$' 10
t_send "/set thinking false"
t_wait '^thinking = off$' 10
t_send "/set repeat-penalty 0"
t_wait "^error: repeat-penalty: '0' is not a number above 0 up to 100$" 10
t_send "/set repeat-penalty -2"
t_wait "^error: repeat-penalty: '-2' is not a number above 0 up to 100$" 10
t_send "/set repeat-last-n -1"
t_wait '^repeat-last-n = 256$' 10
t_send "/set parameter temperature 0.5"
t_wait '^temp = 0.5$' 10
t_send "hello"
t_wait_count "$STATS" 1 30
t_prompt
# Tab completes values: a setting's words, a branch's name
t_type "/set reasoning-effort me"
t_keys Tab
t_wait '^>>> /set reasoning-effort medium ?$' 10
t_keys Enter
t_wait '^reasoning-effort = medium$' 10
t_type "/switch ma"
t_keys Tab
t_wait '^>>> /switch main ?$' 10
t_keys Enter
t_wait "^error: branch 'main' is the current one already$" 10
t_prompt
t_keys C-d
t_wait_exit 30

# a character cut short: one sequence (a line editor may pass on fewer
# of its bytes, the count is the same)
msg=$(printf 'cut \342\202 short\n' | $T_BIN -t 1 -m "$model" -n 1 2>&1 >/dev/null)
[ "$msg" = "note: 1 invalid UTF-8 sequence replaced by U+FFFD" ] || fail "piped: '$msg'"

# one wording: command line and config file
msg=$($T_BIN -m "$model" --repeat-penalty -2 -p hi 2>&1); rc=$?
[ $rc = 2 ] && [ "$msg" = "confab: --repeat-penalty: '-2' is not a number above 0 up to 100" ] ||
    fail "--repeat-penalty -2: rc $rc, '$msg'"
mkdir -p "$XDG_CONFIG_HOME/confab"
printf 'temperature = 0.2\nrepeat-penalty = 0\n' >"$XDG_CONFIG_HOME/confab/config"
msg=$($T_BIN -t 1 -m "$model" -n 1 -p hi 2>&1 >/dev/null)
[ "$msg" = "confab: $XDG_CONFIG_HOME/confab/config:2: repeat-penalty: '0' is not a number above 0 up to 100" ] ||
    fail "config: '$msg'"
rm "$XDG_CONFIG_HOME/confab/config"

# a missing value is named, not the next word
msg=$($T_BIN -m -p hi 2>&1); rc=$?
[ $rc = 2 ] && [ "$msg" = "confab: -m needs a value (FILE) before -p" ] || fail "-m -p hi: rc $rc, '$msg'"
# an empty message, -n 0: said
msg=$($T_BIN -m "$model" -p "" 2>&1); rc=$?
[ $rc = 2 ] && [ "$msg" = "confab: -p: the message is empty (nothing to send)" ] || fail "-p '': rc $rc, '$msg'"
msg=$($T_BIN -t 1 -m "$model" -n 0 -p hi 2>&1); rc=$?
[ $rc = 0 ] && [ "$msg" = "confab: -n 0: every reply ends before its first token (-n -1: no limit)" ] ||
    fail "-n 0: rc $rc, '$msg'"
# more threads than CPUs: one line, and the chat goes on
msg=$($T_BIN -t 1000 -m "$model" -n 2 -p hi 2>&1 >/dev/null); rc=$?
[ $rc = 0 ] && echo "$msg" | grep -Eq '^confab: -t 1000: only [0-9]+ CPUs? (is|are) online, so [0-9]+ threads?' ||
    [ "$(nproc --all)" -ge 1000 ] || fail "-t 1000: rc $rc, '$msg'"
t_done
