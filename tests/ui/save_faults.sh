#!/bin/sh
# Saving when the system says no: a file-size limit (EFBIG), a full disk
# (ENOSPC: a tiny tmpfs), a read-only folder, a target that is a folder.
# Each /save is one error line naming the problem; the previous session
# file stays byte for byte and loads; no temporary file is left; the chat
# goes on.  Then kill -9 at random moments of a run of saves, again and
# again: the session file always loads.
. "$(dirname "$0")/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
STATS='^prompt [0-9]+ tok'
W=$T_DIR/work
mkdir -p "$W/adir" "$W/ro" "$W/full"

# A folder's mode does not stop root: as root, a read-only bind mount and a
# 32 KiB tmpfs in a private mount namespace (the full disk is left out where
# that is not allowed); otherwise mode 555.
printf '%s\n' "chmod 555 '$W/ro'" "echo \$\$ >'$T_DIR/pid'" 'exec "$@"' >"$T_DIR/plain.sh"
printf '%s\n' "mount --bind '$W/ro' '$W/ro' && mount -o remount,ro,bind '$W/ro' '$W/ro' &&" \
    "    mount -t tmpfs -o size=32k tmpfs '$W/full' || exit 1" \
    "echo \$\$ >'$T_DIR/pid'" 'exec "$@"' >"$T_DIR/ns.sh"
full=
if [ "$(id -u)" -eq 0 ] && unshare -m sh -c "mount -t tmpfs -o size=32k tmpfs '$W/full'" 2>/dev/null; then
    t_start "unshare -m sh $T_DIR/ns.sh $T_CHAT -m $model -c 512 -n 24 --seed 5"
    full=yes
else
    echo "no private mount namespace: the full-disk case is left out"
    t_start "sh $T_DIR/plain.sh $T_CHAT -m $model -c 512 -n 24 --seed 5"
fi
t_prompt 30
pid=$(cat "$T_DIR/pid")

# save_fails FILE PATTERN: /save FILE gives one error line matching
# PATTERN, and then the prompt
save_fails() {
    n=$(t_count '^error: ')
    t_send "/save $1"
    t_wait_count '^error: ' $((n + 1)) 10
    t_prompt 10
    line=$(t_history | grep '^error: ' | tail -n 1)
    echo "$line" | grep -Eq -- "$2" || fail "/save $1: '$line' does not say '$2'"
    after=$(t_history | grep -A1 '^error: ' | tail -n 1 | sed 's/ *$//')
    [ "$after" = ">>>" ] || fail "/save $1: more than one line ('$after')"
}
# intact FILE COPY: the file is as it was, loads, and no temporary file
# is beside it
intact() {
    cmp -s "$1" "$2" || fail "$1 changed"
    ls "$(dirname "$1")" | grep -q '\.tmp-' && fail "a temporary file is left beside $1"
    # a copy: a chat on a --session file saves it after the turn
    cp "$1" "$T_DIR/load.session"
    "$T_BIN" -t 1 -m "$model" -c 512 -n 2 --session "$T_DIR/load.session" -p "And?" >/dev/null \
        2>"$T_DIR/err" || fail "$1 does not load: $(cat "$T_DIR/err")"
}

if [ -n "$full" ]; then
    t_send "/save $W/full/s.session"
    t_wait "^saved to $W/full/s.session\$" 10
fi
t_send "/save $W/s.session"
t_wait "^saved to $W/s.session\$" 10
cp "$W/s.session" "$T_DIR/s.copy"
# the tmpfs is seen from confab's mount namespace
in_ns() { nsenter -t "$pid" -m "$@"; }
[ -n "$full" ] && in_ns cp "$W/full/s.session" "$T_DIR/full.copy"
t_send "Tell me about a cat."
t_wait_count "$STATS" 1 30
t_send "And about a dog."
t_wait_count "$STATS" 2 30
t_prompt

if [ -n "$full" ]; then
    save_fails "$W/full/s.session" "No space left on device"
    in_ns cp "$W/full/s.session" "$T_DIR/full.now"
    in_ns ls "$W/full" | grep -q '\.tmp-' && fail "a temporary file is left in the full tmpfs"
    intact "$T_DIR/full.now" "$T_DIR/full.copy"
fi
# past a file-size limit a write fails with EFBIG (SIGXFSZ is ignored)
prlimit --pid "$pid" --fsize="$(wc -c <"$W/s.session")":unlimited || fail "prlimit failed"
save_fails "$W/s.session" "File too large"
intact "$W/s.session" "$T_DIR/s.copy"
prlimit --pid "$pid" --fsize=unlimited:unlimited
save_fails "$W/ro/s.session" "Read-only file system|Permission denied"
[ -z "$(ls "$W/ro")" ] || fail "a file was left in the read-only folder"
save_fails "$W/adir" "Is a directory"
[ -d "$W/adir" ] && [ -z "$(ls "$W/adir")" ] || fail "the folder $W/adir changed"
ls "$W" | grep -q '\.tmp-' && fail "a temporary file is left in $W"

# the chat goes on, and the previous file loads into it
t_send "One more, please."
t_wait_count "$STATS" 3 30
t_prompt
t_send "/load $W/s.session"
t_wait "^loaded $W/s.session: 0 messages\$" 10
t_send "/save $W/s.session"
t_wait_count "^saved to $W/s.session\$" 2 10
t_keys C-d
t_wait_exit 30

# kill -9 at random moments of a run of saves (each a temporary file,
# fsync, rename): the session file loads after every one
printf 'Hi.\n/save %s/k.session\n' "$W" | $T_CHAT -m "$model" -n 8 --seed 1 >/dev/null 2>&1 ||
    fail "the first save of the kill loop failed"
{
    echo "Tell me a story."
    i=0
    while [ $i -lt 400 ]; do
        echo "/save $W/k.session"
        i=$((i + 1))
    done
} >"$T_DIR/saves"
kills=0 mid=0
while [ $kills -lt 25 ]; do
    kills=$((kills + 1))
    $T_CHAT -m "$model" -n 8 --seed $kills <"$T_DIR/saves" >/dev/null 2>&1 &
    victim=$!
    sleep "$(awk -v s=$kills 'BEGIN { srand(s); printf "%.3f", 0.05 + rand() * 0.4 }')"
    kill -9 $victim 2>/dev/null
    wait $victim 2>/dev/null
    ls "$W" | grep -q '^k\.session\.tmp-' && mid=$((mid + 1))
    rm -f "$W"/k.session.tmp-*
    "$T_BIN" -t 1 -m "$model" -n 2 --session "$W/k.session" -p "Go on." >/dev/null 2>"$T_DIR/err" ||
        fail "after kill $kills: $W/k.session does not load: $(cat "$T_DIR/err")"
done
echo "kill -9 during saves: $kills kills, $mid of them inside a write (a temporary file left)," \
    "the session file loaded after each"
t_done
