# Helpers for end-to-end tests that drive confab in a private tmux server.
# Source it, then:
#   t_setup                     private HOME/XDG dirs, tmux socket, cleanup trap
#   t_start CMD...              run CMD in a 120x40 window (exit status kept)
#   t_type TEXT / t_keys KEY... type literal text / send tmux key names
#   t_wait REGEX [SECONDS]      wait until the screen matches (ERE), else fail
#   t_wait_count REGEX N [S]    wait until N screen lines match
#   t_wait_exit [SECONDS]       wait for the program to end; sets T_STATUS
#   t_screen                    the visible screen; t_history adds scrollback
#   fail MSG / t_done           record a failure / report and exit
# Timeouts are generous (a loaded 2-core machine); nothing sleeps a fixed
# time except while polling.

T_BIN=${CONFAB_BIN:?CONFAB_BIN is not set}
T_MODELS=${CONFAB_SHARED:-../shared}/models
T_FAILS=0
T_NAME=$(basename "$0" .sh)

t_setup() {
    command -v tmux >/dev/null 2>&1 || { echo "tmux is not installed: skipped"; exit 77; }
    [ -d "$T_MODELS" ] || { echo "no $T_MODELS: skipped"; exit 77; }
    T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/confab-$T_NAME.XXXXXX")
    T_SOCK=confab-test-$$
    mkdir -p "$T_DIR/home" "$T_DIR/config" "$T_DIR/state" "$T_DIR/data" "$T_DIR/work"
    export HOME="$T_DIR/home" XDG_CONFIG_HOME="$T_DIR/config" XDG_STATE_HOME="$T_DIR/state"
    export XDG_DATA_HOME="$T_DIR/data" LANG=C.UTF-8 LC_ALL=C.UTF-8 INPUTRC=/dev/null
    unset NO_COLOR CONFAB_MODEL TMUX
    trap t_cleanup EXIT INT TERM
}

t_cleanup() {
    tmux -L "$T_SOCK" kill-server 2>/dev/null
    [ -n "$T_KEEP" ] || rm -rf "$T_DIR"
}

tm() { tmux -L "$T_SOCK" "$@"; }

# t_start CMD... : the command runs through sh -c in $T_DIR/work.
t_start() {
    tm kill-server 2>/dev/null
    tm -f /dev/null new-session -d -s t -x 120 -y 40 -c "$T_DIR/work" \
        "cd '$T_DIR/work' && exec $*" || { echo "tmux failed to start"; exit 1; }
    tm set-option -g remain-on-exit on
    tm set-option -g history-limit 20000
}

t_type() { tm send-keys -t t -l -- "$1"; }
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

# t_wait REGEX [SECONDS]: returns 1 (and records a failure) on timeout.
t_wait() {
    t0=$(t_now)
    while ! t_screen | grep -Eq -- "$1"; do
        if t_over "$t0" "${2:-30}"; then
            fail "timed out waiting for /$1/"
            t_dump
            return 1
        fi
        sleep 0.05
    done
}

# t_wait_count REGEX N [SECONDS]: the whole history has at least N matching lines.
t_wait_count() {
    t0=$(t_now)
    while [ "$(t_history | grep -Ec -- "$1")" -lt "$2" ]; do
        if t_over "$t0" "${3:-30}"; then
            fail "timed out waiting for $2 lines matching /$1/ (have $(t_history | grep -Ec -- "$1"))"
            t_dump
            return 1
        fi
        sleep 0.05
    done
}

t_wait_exit() {
    t0=$(t_now)
    while [ "$(tm display -p -t t '#{pane_dead}')" != 1 ]; do
        if t_over "$t0" "${1:-30}"; then
            fail "the program did not exit"
            t_dump
            T_STATUS=none
            return 1
        fi
        sleep 0.05
    done
    T_STATUS=$(tm display -p -t t '#{pane_dead_status}')
}

t_done() {
    if [ "$T_FAILS" -eq 0 ]; then
        echo "$T_NAME: ok"
        exit 0
    fi
    echo "$T_NAME: $T_FAILS failure(s)"
    exit 1
}
