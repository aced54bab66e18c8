#!/bin/sh
# The replies' format in a terminal: /set format FILE (a JSON schema) makes
# each reply a document of the schema, /set format json a JSON object, a
# bad value one error line, /set format off free text again; --format on
# the command line does the same from the first reply.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
printf '{"enum": ["yes", "no", "maybe"]}\n' >"$T_DIR/answer.json"
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 60 --seed 5 --temp 1.2"
t_prompt 30
t_send "/set format $T_DIR/answer.json"
t_wait "^format = $T_DIR/answer.json$" 10
t_send "Is it raining?"
t_wait '^"(yes|no|maybe)"$' 30
t_send "Again?"
t_wait_count '^"(yes|no|maybe)"$' 2 30
t_send "/set format nope.json"
t_wait "^error: format: 'nope.json' is not json, off, or a JSON schema's file$" 10
t_send "/set format json"
t_wait '^format = json$' 10
t_send "As an object?"
t_wait_count "$STATS" 3 30
t_history | grep -q '^{' || fail "no reply beginning with {"
t_send "/set format off"
t_wait '^format = off$' 10
t_keys C-d
t_wait_exit 30

t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 60 --seed 6 --temp 1.2 --format $T_DIR/answer.json"
t_prompt 30
t_send "Is it?"
t_wait '^"(yes|no|maybe)"$' 30
t_keys C-d
t_wait_exit 30
t_done
