#!/bin/sh
# Token probabilities: /set probs on colours the streamed tokens (256-colour
# tones; with NO_COLOR the unlikely ones underlined), /show probs lists a
# reply's tokens with p and the top 5 and its perplexity; F4 in full
# screen turns it on and the status bar says so.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
escaped() { tm capture-pane -t t -p -e -S -200; }
t_start "$T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 24 --seed 5 --temp 1.2"
t_prompt 30
t_send "Tell me a story."
t_wait_count "$STATS" 1 30
escaped | grep -q '38;5;' && fail "tokens coloured while probs is off"
t_send "/show probs"
t_wait '^reply 1 has no probabilities: they are recorded while /set probs is on$' 10
t_send "/set probs on"
t_wait '^probs = on$' 10
t_send "Tell me another."
t_wait_count "$STATS" 2 30
escaped | grep -q '38;5;\(28\|136\|166\|160\)m' || fail "no token coloured by its probability"
t_send "/show probs"
t_wait '^     p  token                top 5$' 10
t_wait '^reply 2: 24 tokens, mean log-prob -[0-9.]+, perplexity [0-9.]+$' 10
t_wait '^ *[01]\.[0-9]{3}  ".*" [01]\.[0-9]{3}' 10
t_send "/show probs 3"
t_wait "^error: /show probs: no reply '3' \(replies 1 to 2\)$" 10
t_keys C-d
t_wait_exit 30

# NO_COLOR: only the unlikely tokens stand out, underlined
t_start "NO_COLOR=1 $T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 24 --seed 5 --temp 1.5"
t_prompt 30
t_send "/set probs on"
t_send "Tell me a story."
t_wait_count "$STATS" 1 30
escaped | grep -q '38;5;' && fail "colours with NO_COLOR set"
escaped | grep -q "$(printf '\033')\[4m" || fail "no unlikely token underlined"
t_keys C-d
t_wait_exit 30

# full screen: F4
t_start "$T_CHAT --tui -m $T_MODELS/stories260K-chatml.gguf -n 24 --seed 5 --temp 1.2"
t_wait_status 'ready' 30
t_status_has 'probs' && fail "probs shown while off"
t_keys F4
t_wait_status 'probs' 10
t_send "Tell me a story."
t_wait '^prompt [0-9]+ tok' 30
tm capture-pane -t t -p -e | grep -q '38;5;\(28\|136\|166\|160\)m' || fail "no token coloured in full screen"
t_keys C-d
t_wait_exit 30
t_done
