#!/bin/sh
# gpt-oss with its real template: a reply the model writes without any
# channel header (the tiny random model never writes one) is shown as the
# answer and kept as the final channel's text, not dropped.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
T_TEMPLATES=${CONFAB_SHARED:-../shared}/templates/2026
t_start "$T_CHAT -m $T_MODELS/gpt-oss.MXFP4_MOE.gguf \
    --chat-template-file $T_TEMPLATES/openai-gpt-oss-120b.jinja -n 16 --seed 1"
t_prompt 30
t_send "What is 7 * 6?"
t_wait_count "$STATS" 1 60
t_prompt 10
# the lines between the message and the statistics hold the reply
reply=$(t_history | sed -n '/^>>> What is 7 \* 6?$/,/^prompt [0-9]* tok/p' | sed '1d;$d' | tr -d ' \n')
[ -n "$reply" ] || fail "the reply is blank"
t_send "/show prompt"
t_wait 'tokens: .* in the cache' 10
# the prompt's lines wrap at the terminal's width: read them as one
t_history | tr -d '\n' | grep -q '<|channel|>final<|message|><|end|>' && fail "the prompt keeps an empty final message"
t_history | tr -d '\n' | grep -Eq '<\|channel\|>final<\|message\|>.+<\|end\|>' || fail "the prompt has no final message"
t_keys C-d
t_wait_exit 30
[ "$T_STATUS" = 0 ] || fail "exit status $T_STATUS"
t_done
