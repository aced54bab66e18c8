#!/bin/sh
# Markdown in the replies (scripted with CONFAB_TEST_REPLIES, markers cut
# across tokens), in a 40-column line-mode chat: a code block framed, its
# language named, its body lines the reply's own bytes and nothing else
# (copy-safe); a table aligned; a paragraph wrapped at spaces, every row
# within the width; **bold** styled.  NO_COLOR: no escape sequences, the
# frame and the alignment stay.  /set markdown off, and a pipe: the reply
# as it is.  Full-screen mode renders it too.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
replies=$T_DIR/replies.txt
# (| cuts a reply into pieces tokenized apart, \| is a pipe)
line='Here is **co|de**:\n\n`|``py|thon\ndef greet(name):\n    return "hi " + name  # say it\n`|``\n\nA table:\n\n\| Name \| Qty \|\n\|:--\|-|-:\|\n\| apple \| 3 \|\n\| naïve \| 12 \|\n\nThe end of a long paragraph that goes on and on so that it has to wrap at word boundaries on a narrow terminal.'
for i in 1 2 3 4; do printf '%s\n' "$line"; done >"$replies"
# the reply's text: escapes resolved, the cuts gone
raw=$(printf '%s' "$line" | awk '{
    out = ""
    for (i = 1; i <= length($0); i++) {
        c = substr($0, i, 1)
        if (c == "\\") { d = substr($0, ++i, 1); out = out (d == "n" ? "\n" : d) }
        else if (c != "|") out = out c
    }
    printf "%s", out }')
PARA='The end of a long paragraph that goes on and on so that it has to wrap at word boundaries on a narrow terminal.'
TABLE=$(printf '%s\n' '| Name  | Qty |' '|:------|----:|' '| apple |   3 |' '| naïve |  12 |')
ESC=$(printf '\033')
STATS='^(prompt|reply) [0-9]+ tok'

# the lines of reply N on the screen (between its >>> line and the statistics)
reply_lines() { t_history | awk -v n="$1" '/^>>> /{k++; next} /^(prompt|reply) [0-9]+ tok/{if (k == n) exit} k == n'; }
strip_sgr() { sed "s/$ESC\[[0-9;]*m//g"; }

T_COLS=40 t_start "CONFAB_TEST_REPLIES=$replies $T_CHAT -m $model"
t_prompt 30
t_send "Show me."
t_wait "$STATS" 30
t_prompt
got=$(reply_lines 1)
echo "$got" | grep -Eq '^╭─ ```python ─+$' || fail "no top frame naming python: $got"
echo "$got" | grep -Eq '^╰─ ``` ─+$' || fail "no bottom frame: $got"
# the body lines are exactly the reply's, also with their escape sequences stripped
colored=$(tm capture-pane -t t -p -e -S -200)
for body in 'def greet(name):' '    return "hi " + name  # say it'; do
    echo "$got" | grep -qxF "$body" || fail "body line '$body' not shown as it is"
    echo "$colored" | strip_sgr | grep -qxF "$body" || fail "body line '$body' carries more than styles"
done
echo "$colored" | grep -Eq "\*\*${ESC}\[[0-9;]*1m(${ESC}\[[0-9;]*m)*code" || fail "**code** is not bold"
echo "$got" | grep -qxF 'Here is **code**:' || fail "the markers cut across tokens were not kept"
[ "$(echo "$got" | grep -F '|')" = "$TABLE" ] || fail "table not aligned: $(echo "$got" | grep -F '|')"
# the paragraph: rows within 40 columns, broken at spaces only
rows=$(echo "$got" | sed -n '/^The end/,$p')
[ "$(echo "$rows" | wc -l)" -ge 3 ] || fail "the paragraph is not wrapped: $rows"
echo "$rows" | awk 'length($0) > 40 { exit 1 }' || fail "a row wider than 40 columns: $rows"
[ "$(echo "$rows" | tr '\n' ' ' | sed 's/ *$//')" = "$PARA" ] ||
    fail "the paragraph's rows are not its words: $rows"

# off: the reply as it is (the terminal wraps it)
t_send "/set markdown off"
t_wait '^markdown = off$' 10
t_send "Again."
t_wait_count "$STATS" 2 30
t_prompt
[ "$(tm capture-pane -t t -p -J -S -200 | awk '/^>>> Again\./{on=1; next} /^(prompt|reply) [0-9]+ tok/{on=0} on')" = "$raw" ] ||
    fail "markdown off: not the raw reply"
t_send "/show settings"
t_wait '^markdown +off$' 10
t_keys C-d
t_wait_exit 30

# NO_COLOR: no escape sequence at all, the structure stays
T_COLS=40 t_start "NO_COLOR=1 CONFAB_TEST_REPLIES=$replies $T_CHAT -m $model"
t_prompt 30
t_send "Show me."
t_wait "$STATS" 30
t_prompt
tm capture-pane -t t -p -e -S -200 | grep -q "$ESC\[" && fail "NO_COLOR: escape sequences"
t_screen | grep -Eq '^╭─ ```python ─+$' || fail "NO_COLOR: no frame"
[ "$(reply_lines 1 | grep -F '|')" = "$TABLE" ] || fail "NO_COLOR: table not aligned"
t_keys C-d
t_wait_exit 30

# a pipe gets the reply byte for byte; so does --markdown off on a terminal's stdout
out=$T_DIR/out
printf 'Hi\n' | CONFAB_TEST_REPLIES=$replies $T_CHAT -m "$model" >"$out" 2>/dev/null ||
    fail "pipe: exit status $?"
[ "$(cat "$out")" = "$raw" ] || fail "pipe: not the raw reply: $(cat "$out")"

# full screen: rendered as well
T_COLS=60 t_start "CONFAB_TEST_REPLIES=$replies $T_CHAT --tui -m $model"
t_wait_status 'ready' 30
t_send "Show me."
t_wait "$STATS" 30
t_screen | grep -Eq '^╭─ ```python ─+$' || fail "tui: no frame"
t_screen | grep -Eq '^╰─ ``` ─+$' || fail "tui: no bottom frame"
[ "$(t_screen | grep '^|')" = "$TABLE" ] || fail "tui: table not aligned: $(t_screen | grep '^|')"
t_keys C-d
t_wait_exit 30
t_done
