# Helpers for end-to-end tests that drive confab in a private tmux server.
# Source it, then:
#   t_setup                     private HOME/XDG dirs, cleanup trap (skips
#                               the test, status 77, without tmux or models)
#   t_start CMD...              run CMD in a 120x40 window on a fresh server
#                               (T_COLS columns when set)
#   t_type TEXT / t_send TEXT   type literal text / and press Enter
#   t_keys KEY... / t_paste F   tmux key names / paste a file (bracketed)
#   t_wait REGEX [SECONDS]      wait until the screen matches (ERE); a wait
#                               that times out fails and ends the test
#   t_wait_count REGEX N [S]    wait until N lines of the history match
#   t_prompt [S]                wait for an empty line-mode prompt
#   t_wait_exit [SECONDS]       wait for the program to end; sets T_STATUS
#   t_wait_status / t_wait_growth / t_terminal_restored   full-screen mode
#   t_screen / t_history        the visible screen / with the scrollback
#   fail MSG / t_done           record a failure / report and exit
# Timeouts are generous (a loaded 2-core machine); nothing sleeps a fixed
# time except between polls.

T_BIN=${CONFAB_BIN:?CONFAB_BIN is not set}
# One thread: the tiny test models are fastest so, and threads that spin
# while waiting for each other crawl on a loaded machine.
T_CHAT="$T_BIN -t 1"
T_MODELS=${CONFAB_SHARED:-../shared}/models
T_FAILS=0
T_NAME=$(basename "$0" .sh)

t_setup() {
    command -v tmux >/dev/null 2>&1 || { echo "tmux is not installed: skipped"; exit 77; }
    [ -d "$T_MODELS" ] || { echo "no $T_MODELS: skipped"; exit 77; }
    T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/confab-$T_NAME.XXXXXX")
    T_RUN=0
    mkdir -p "$T_DIR/home" "$T_DIR/config" "$T_DIR/state" "$T_DIR/data" "$T_DIR/work"
    export HOME="$T_DIR/home" XDG_CONFIG_HOME="$T_DIR/config" XDG_STATE_HOME="$T_DIR/state"
    export XDG_DATA_HOME="$T_DIR/data" LANG=C.UTF-8 LC_ALL=C.UTF-8 INPUTRC=/dev/null
    unset NO_COLOR CONFAB_MODEL TMUX
    # In a sanitizer build, any report ends the program (and so the test).
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
    trap t_cleanup EXIT
    trap 't_cleanup; exit 1' INT TERM HUP PIPE
}

t_cleanup() {
    [ -n "$T_SOCK" ] && tmux -L "$T_SOCK" kill-server 2>/dev/null
    [ -n "$T_KEEP" ] || rm -rf "$T_DIR"
}

tm() { tmux -L "$T_SOCK" "$@"; }

# t_start CMD... : run the shell command CMD in $T_DIR/work, in a fresh tmux
# server (a private socket each time).  When it ends, "[exited STATUS]" is
# shown and the pane stays (the terminal state can still be looked at).
t_start() {
    [ -n "$T_SOCK" ] && tm kill-server 2>/dev/null
    T_RUN=$((T_RUN + 1))
    T_SOCK=confab-test-$$-$T_RUN
    # The wrapper survives the Ctrl-C meant for CMD (a trap, unlike an
    # ignored signal, is not inherited).
    cat >"$T_DIR/run$T_RUN.sh" <<EOF
trap : INT
cd '$T_DIR/work' || exit 1
$*
echo "[exited \$?]"
exec sleep 3600
EOF
    tm -f /dev/null start-server \; set-option -g history-limit 20000 \; \
        new-session -d -s t -x "${T_COLS:-120}" -y 40 "sh '$T_DIR/run$T_RUN.sh'" ||
        { echo "tmux failed to start"; exit 1; }
}

t_type() { tm send-keys -t t -l -- "$1"; }
# t_send TEXT: type a line and press Enter.
t_send() { t_type "$1"; tm send-keys -t t Enter; }
# t_paste FILE: paste a file as a terminal would (bracketed if asked for).
t_paste() { tm load-buffer -b paste "$1" && tm paste-buffer -p -d -b paste -t t; }
t_keys() { tm send-keys -t t "$@"; }
t_screen() { tm capture-pane -t t -p; }
t_history() { tm capture-pane -t t -p -S -20000; }

t_now() { date +%s.%N; }
t_elapsed() { awk -v a="$1" -v b="$(t_now)" 'BEGIN { print b - a }'; }
t_over() { awk -v a="$1" -v b="$(t_now)" -v t="$2" 'BEGIN { exit !(b - a > t) }'; }

fail() {
    echo "FAIL ($T_NAME): $*"
    T_FAILS=$((T_FAILS + 1))
}

t_dump() {
    echo "---- screen ----"
    t_history | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' | tail -45
    echo "----------------"
}

# t_until SECONDS WHAT CMD...: poll CMD until it succeeds; on timeout
# record "timed out waiting for WHAT", show the screen and end the test
# (what follows would only wait in vain).
t_until() {
    t_limit=$1 t_what=$2
    shift 2
    t0=$(t_now)
    while ! "$@"; do
        if t_over "$t0" "$t_limit"; then
            fail "timed out waiting for $t_what"
            t_dump
            t_done
        fi
        sleep 0.05
    done
}

t_screen_has() { t_screen | grep -Eq -- "$1"; }
t_history_has() { [ "$(t_history | grep -Ec -- "$1")" -ge "$2" ]; }
t_last_line_is() { [ "$(t_screen | sed '/^$/d' | tail -n 1)" = "$1" ]; }

# t_wait REGEX [SECONDS]: the screen shows a line matching REGEX (ERE).
t_wait() { t_until "${2:-30}" "/$1/" t_screen_has "$1"; }
# t_wait_count REGEX N [SECONDS]: the whole history has N matching lines.
t_wait_count() { t_until "${3:-30}" "$2 lines matching /$1/" t_history_has "$1" "$2"; }
# t_prompt [SECONDS]: an empty line-mode prompt is the last line.
t_prompt() { t_until "${1:-30}" "the prompt" t_last_line_is ">>>"; }

# t_count REGEX: lines of the whole history that match.
t_count() { t_history | grep -Ec -- "$1"; }

# t_hello_regen MODEL: the REPL on $T_MODELS/MODEL.gguf (greedy, 8-token
# replies) says "Hello." and /regen, each reply's statistics awaited; it
# is left at the prompt.
t_hello_regen() {
    stats='^prompt [0-9]+ tok, [0-9.]+ t/s · reply [0-9]+ tok'
    t_start "$T_CHAT -m $T_MODELS/$1.gguf -n 8 --seed 5"
    t_wait "^loaded $1.gguf" 30
    t_prompt
    t_send "Hello."
    t_wait_count "$stats" 1 30
    t_prompt
    t_send "/regen"
    t_wait_count "$stats" 2 30
    t_prompt
}

# t_wait_exit [SECONDS]: the program ended; T_STATUS is its exit status.
t_wait_exit() {
    T_STATUS=none
    t_until "${1:-30}" "the program to exit" t_screen_has '^\[exited [0-9]+\]$'
    T_STATUS=$(t_screen | sed -n 's/^\[exited \([0-9]*\)\]$/\1/p' | tail -n 1)
}

t_done() {
    if [ "$T_FAILS" -eq 0 ]; then
        echo "$T_NAME: ok"
        exit 0
    fi
    echo "$T_NAME: $T_FAILS failure(s)"
    exit 1
}

# ---- full-screen mode ----------------------------------------------------------
# The status bar is the second-last screen row, the input line the last.
t_status() { t_screen | tail -n 2 | head -n 1; }
t_status_has() { t_status | grep -Eq -- "$1"; }
t_pane_hash() { t_screen | head -n -2 | md5sum; }
t_pane_changed() { [ "$(t_pane_hash)" != "$1" ]; }
# t_wait_status REGEX [SECONDS]: the status bar matches.
t_wait_status() { t_until "${2:-30}" "the status bar to show /$1/" t_status_has "$1"; }
# t_wait_growth [SECONDS]: the transcript pane changes (tokens arrive).
t_wait_growth() { t_until "${1:-10}" "new text in the transcript" t_pane_changed "$(t_pane_hash)"; }
# t_terminal_restored: the program left the alternate screen, mouse and
# keypad modes, and the cursor is visible.
t_terminal_restored() {
    flags=$(tm display -p -t t '#{alternate_on}#{mouse_any_flag}#{keypad_flag}#{cursor_flag}')
    [ "$flags" = "0001" ] || fail "terminal not restored (alternate, mouse, keypad, cursor = $flags)"
}
