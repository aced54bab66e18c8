#!/bin/sh
# --tools in a terminal, with Qwen3's template on the tiny model and
# --tool-choice required (a grammar makes its random-ish replies a
# well-formed call): each call is shown and asked about, y runs its command
# (the arguments on stdin and in $CONFAB_TOOL_ARGS), whose output goes back
# to the model, whose next reply follows; n declines it, and the command
# does not run; --tui asks the same in its transcript, a script answers
# with its next line of input.  A template
# without tools, and --tool-choice without --tools, are one error line each.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
cat >"$T_DIR/tools.json" <<JSON
[{"name": "get_weather", "description": "The weather in a city",
  "parameters": {"type": "object", "properties": {"city": {"enum": ["Paris", "Oslo"]}},
                 "required": ["city"]},
  "command": "cat >'$T_DIR/stdin'; printf '%s' \"\$CONFAB_TOOL_NAME \$CONFAB_TOOL_ARGS\" >'$T_DIR/env'; echo 22 C and sunny"}]
JSON
TEMPLATE="${CONFAB_SHARED:-../shared}/templates/2026/Qwen-Qwen3-0.6B.jinja"
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf --chat-template-file $TEMPLATE -n 120 --seed 3 --tools $T_DIR/tools.json --tool-choice required"
t_prompt 30
t_send "What is the weather?"
t_wait '^tool call: get_weather \{"city":"(Paris|Oslo)"\}$' 30
t_wait 'run get_weather\? \[y/N\]' 10
t_keys y
t_wait '^\[get_weather: exit status 0, 15 bytes of output\]$' 10
t_wait_count "$STATS" 2 30
grep -Eq '^\{"city":"(Paris|Oslo)"\}$' "$T_DIR/stdin" || fail "the command's stdin: $(cat "$T_DIR/stdin")"
grep -Eq '^get_weather \{"city":"(Paris|Oslo)"\}$' "$T_DIR/env" || fail "its environment: $(cat "$T_DIR/env")"
t_prompt 30
t_send "/show prompt"
t_wait '<tool_response>' 10
rm -f "$T_DIR/stdin"
t_send "And tomorrow?"
t_wait_count '^tool call: get_weather' 2 30
t_wait 'run get_weather\? \[y/N\]' 10
t_keys n
t_wait '^\[not run\]$' 10
t_wait_count "$STATS" 4 30
[ -e "$T_DIR/stdin" ] && fail "a declined call ran"
t_prompt 30
t_keys C-d
t_wait_exit 30

# full screen: the question in the transcript, a key answers it
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf --chat-template-file $TEMPLATE -n 120 --seed 3 --tools $T_DIR/tools.json --tool-choice required --tui"
t_wait_status 'ready' 30
t_send "What is the weather?"
t_wait 'run get_weather\? \[y/N\]' 30
t_keys y
t_wait '\[get_weather: exit status 0, 15 bytes of output\]' 10
t_keys C-d
t_wait_exit 30

# a script answers with its next line: y runs the call, the end of the input declines
out=$(printf 'Weather?\ny\nAnd now?\n' | $T_CHAT -m $T_MODELS/stories260K-chatml.gguf \
      --chat-template-file "$TEMPLATE" -n 120 --seed 3 --tools "$T_DIR/tools.json" \
      --tool-choice required 2>&1)
echo "$out" | grep -q '^run get_weather? \[y/N\] y$' || fail "piped y: $out"
echo "$out" | grep -q '^run get_weather? \[y/N\] n$' || fail "piped end of input: $out"
[ "$(echo "$out" | grep -c '^\[get_weather: exit status 0')" = 1 ] || fail "runs: $out"

t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf --tools $T_DIR/tools.json"
t_wait "^confab: --tools: the model's chat template renders no tools" 30
t_wait_exit 30
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf --tool-choice required"
t_wait "^confab: --tool-choice: there are no tools" 30
t_wait_exit 30
t_done
