#!/bin/sh
# Branches in a real terminal: /regen keeps the old reply on its branch,
# /branches draws the tree, /switch reports the reused and prefilled
# tokens, /edit through $EDITOR (the edited message shown before its
# reply) and inline on the prefilled line, and the
# full-screen status bar names the branch.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
STATS='^prompt [0-9]+ tok'
cat >"$T_DIR/ed.sh" <<'EOF2'
#!/bin/sh
sed -i 's/dog/cat/' "$1"
EOF2
chmod +x "$T_DIR/ed.sh"
t_start "env -u VISUAL EDITOR='$T_DIR/ed.sh' $T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 12 --seed 3"
t_prompt 30
t_send "Tell me about a dog."
t_wait_count "$STATS" 1 30
t_send "What did the dog eat?"
t_wait_count "$STATS" 2 30
t_send "/regen"
t_wait_count "$STATS" 3 30
t_send "/branches"
t_wait '^2 branches \(\* the current one' 10
t_wait '^Tell me about a dog\. → ' 10
t_wait '^├ What did the dog eat\? → .*\[1 main\]$' 10
t_wait '^└ What did the dog eat\? → .*\[\* 2\]$' 10
t_send "/switch main"
t_wait '^switched to branch 1 main \(4 messages\): [0-9]+ tokens reused from the cache, [1-9][0-9]* prefilled$' 10
t_send "/switch 1"
t_wait "^error: branch '1' is the current one already" 10
# through the editor: dog becomes cat on a new branch, answered at once
t_send "/edit 1"
t_wait '^on a new branch, 3 ' 10
t_wait_count "$STATS" 4 30
# the edited message is shown before its reply, once
[ "$(t_history | sed -n '/^>>> \/edit 1$/,$p' | grep -Ec '^>>> Tell me about a cat\.$')" = 1 ] ||
    fail "the message the editor made is not shown once after /edit"
t_send "/branches"
t_wait '^└ Tell me about a cat\. → .*\[\* 3\]$' 10
t_send "/branch side"
t_wait '^on branch 4 side now; the conversation so far stays on branch 3 too$' 10
t_send "/branch 12"
t_wait "^error: '12' cannot name a branch" 10
t_keys C-d
t_wait_exit 30

# inline: no editor, the message waits on the input line to be changed
t_start "env -u VISUAL -u EDITOR $T_CHAT -m $T_MODELS/stories260K-chatml.gguf -n 12 --seed 3"
t_prompt 30
t_send "Tell me about a dog."
t_wait_count "$STATS" 1 30
t_send "/edit"
t_wait '^editing message 1: change it and press Enter' 10
t_wait '^>>> Tell me about a dog\.$' 10
t_type " Now."
t_keys Enter
t_wait '^on a new branch, 2 ' 10
t_wait_count "$STATS" 2 30
[ "$(t_count '^>>> Tell me about a dog\. Now\.$')" = 1 ] || fail "the inline edit is not shown once"
t_send "/branches"
t_wait '^└ Tell me about a dog\. Now\. → .*\[\* 2\]$' 10
t_keys C-d
t_wait_exit 30

# full screen: the status bar names the branch once there are two
t_start "$T_CHAT --tui -m $T_MODELS/stories260K-chatml.gguf -n 8 --seed 3"
t_wait_status 'ready' 30
t_send "Hello."
t_wait '^prompt [0-9]+ tok' 30
t_status_has 'branch' && fail "a branch shown while there is one"
t_send "/regen"
t_wait_status 'branch 2' 30
t_send "/switch main"
t_wait_status 'branch 1 main' 30
t_keys C-d
t_wait_exit 30
t_done
