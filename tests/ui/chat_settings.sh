#!/bin/sh
# Line mode: /set and /show, one error line for every bad command (and
# nothing changes), input of several lines, /help NAME, Tab completion of
# commands, settings and paths.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 8"
t_prompt 30

t_send "/set temp 0.3"
t_wait '^temp = 0\.3$' 10
t_send "/show settings"
t_wait '^temp +0\.3$' 10
t_wait '^top-k +40$' 5

# each bad command: exactly one error line, and the setting stays
n=$(t_count '^error: ')
t_send "/set temp hot"
t_wait_count '^error: ' $((n + 1)) 10
t_send "/set temp -5"
t_wait_count '^error: ' $((n + 2)) 10
t_send "/set warmth 2"
t_wait '^error: unknown setting .warmth.' 10
t_send "/set parameter num_ctx 4096"
t_wait '^error: num_ctx: the context size is set when the chat starts' 10
t_send "/frobnicate now"
t_wait "^error: unknown command '/frobnicate' \\(try /help\\)$" 10
t_send "/show nonsense"
t_wait '^error: nothing to show called .nonsense.' 10
t_send "/undo please"
t_wait '^error: /undo takes no argument$' 10
t_prompt
[ "$(t_count '^error: ')" -eq $((n + 7)) ] || fail "not one error line per bad command"
t_send "/show settings"
t_wait_count '^temp +0\.3$' 2 10

# ollama's and llama.cpp's spellings of the same settings
t_send "/set parameter temperature 0.4"
t_wait '^temp = 0\.4$' 10
t_send "/set top_p 0.9"
t_wait '^top-p = 0\.9$' 10
t_send "/set num_predict 12"
t_wait '^n-predict = 12$' 10
t_send "/set nothink"
t_wait '^thinking = off$' 10
t_send "/set temp 0.3"
t_wait_count '^temp = 0\.3$' 2 10

t_send "/set system Be brief."
t_wait '^system prompt set$' 10
t_send "/show system"
t_wait '^Be brief\.$' 10
t_send "/show parameters"
t_wait_count '^temp +0\.3$' 3 10
t_send "/show settings"
t_wait '^system +"Be brief\."$' 10
# a system prompt of several lines, between """ lines
t_send '/set system """'
t_wait '^\.\.\. ?$' 5
t_send "First line of the prompt."
t_send "Second line."
t_send '"""'
t_wait '^system prompt set$' 10
t_send "/show settings"
t_wait '^system +"First line of the prompt\.\.\.\."$' 10
# a message continued with a trailing backslash is one message
t_send "/set n-predict 4"
t_send 'One line \'
t_wait '^\.\.\. ?$' 5
t_send "and the next."
t_wait '^prompt [0-9]+ tok' 30
t_prompt
t_send "/show context"
t_wait ', 3 messages$' 10
t_send "/help set"
t_wait '^/set NAME VALUE changes a setting from the next token on:$' 10
t_wait 'repeat-penalty X' 5
[ "$(t_count '^/set NAME VALUE')" -eq 1 ] || fail "/help set: the header twice"
t_send "/help"
t_wait '^/regen +write the last reply again$' 10

# Tab completion: the command, a setting name, a /show topic, a path
t_prompt
t_type "/se"; t_keys Tab; t_type "top-"; t_keys Tab Tab
t_wait 'top-k +top-p' 10
t_type "k"; t_keys Tab; t_type "12"; t_keys Enter
t_wait '^top-k = 12$' 10
t_type "/show con"; t_keys Tab Enter
t_wait '^context: [0-9]+ / [0-9]+ tokens used' 10
touch "$T_DIR/work/saved-chat.session"
t_type "/load saved-c"; t_keys Tab
t_wait '^>>> /load saved-chat\.session ?$' 10
t_keys C-u
t_send "/bye"
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS"
t_done
