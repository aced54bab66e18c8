#!/bin/sh
# confab chat with its model on a server: confab serve on loopback, the
# client through real sockets and HTTP.  Scripted and line-mode chats over
# several turns, /set reaching the request (the server logs each one's
# settings), Ctrl-C (a real SIGINT) in the middle of a streamed reply, the
# banner, status bar (the server's sampling until a setting is given) and
# stats, /show model, save and load (into a local
# model too, and resumed with --session alone), the config file, and the
# command-line errors.
. "$(dirname "$0")/../ui/tmux_lib.sh"
t_setup
model=$T_MODELS/stories260K-chatml.gguf
out=$T_DIR/out err=$T_DIR/err log=$T_DIR/serve.log
"$T_BIN" --endpoint http://127.0.0.1:1 -m x -p x 2>&1 | grep -q 'not built in' &&
    { echo "built without libcurl: skipped"; exit 77; }

# replies last a while (10 ms a piece), so Ctrl-C lands in the middle of one
CONFAB_TEST_TOKEN_DELAY_MS=10 "$T_BIN" serve -m "$model" --port 0 -t 1 -v 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; t_cleanup' EXIT
t0=$(t_now)
until grep -q 'listening on' "$log"; do
    t_over "$t0" 20 && { fail "confab serve did not start"; t_done; }
    sleep 0.05
done
url=$(sed -n 's|.*listening on \(http://[^ ]*\) .*|\1|p' "$log")
REMOTE="$T_BIN --endpoint $url"
STATS='^remote · prompt [0-9]+ tok'
requests() { grep -c '^POST /v1/chat/completions 200' "$log"; }
# The server logs a request once its reply is sent, maybe after the client
# is done: wait_log PATTERN waits (up to 10 s) for the line.
wait_log() {
    t0=$(t_now)
    until grep -q -- "$1" "$log"; do
        t_over "$t0" 10 && return 1
        sleep 0.05
    done
}
# wait_requests N: the server has answered N requests.
wait_requests() {
    t0=$(t_now)
    until [ "$(requests)" -ge "$1" ]; do
        t_over "$t0" 10 && return 1
        sleep 0.05
    done
}

# scripted: two turns, the second with settings changed by /set
printf 'Hello.\n/set temp 0\n/set seed 5\n/set top-k 3\nTell me more.\n' |
    $REMOTE -n 8 --verbose >"$out" 2>"$err"
rc=$?
[ $rc -eq 0 ] || fail "scripted: exit status $rc: $(cat "$err")"
[ "$(grep -Ec "$STATS" "$err")" -eq 2 ] || fail "scripted: not 2 replies: $(cat "$err")"
[ "$(wc -l <"$out")" -ge 2 ] || fail "scripted: no replies on stdout"
grep -q 'request settings: n-predict=8; 0 stop' "$log" || fail "first request: $(cat "$log")"
grep -q 'request settings: temp=0 top-k=3 seed=5 n-predict=8;' "$log" ||
    fail "/set did not reach the request: $(cat "$log")"
wait_log '· 3 messages · ' || fail "the second request did not carry the conversation"
grep -q '· 1 message · ' "$log" || fail "the first request's log line: $(grep POST "$log" | head -1)"

# line mode: the banner, Ctrl-C mid-reply, the chat going on
t_start "$REMOTE -n 2000"
t_wait "confab .* · remote: stories260K-chatml.gguf at $url" 20
t_prompt 20
t_send "Tell me a very long story."
t0=$(t_now)
while [ "$(t_history | sed -n '/^>>> Tell me/,$p' | wc -c)" -lt 200 ]; do
    t_over "$t0" 30 && { fail "no reply text"; break; }
    sleep 0.05
done
t_keys C-c
t_wait '^\[stopped: the partial reply stays in the conversation\]$' 10
t_prompt 10
wait_log 'cut: the client went away' ||
    fail "the server did not see the client leave: $(tail -3 "$log")"
t_send "/set n-predict 4"
t_send "Go on."
t_wait_count "$STATS" 1 30
t_prompt 10
t_send "/show model"
t_wait '^its models stories260K-chatml\.gguf$' 10
t_send "/show context"
t_wait '^context: the server.s; 4 messages' 10
# the request's body, indented
t_send "/show prompt"
t_wait '^  "messages": \[$' 10
t_wait '^\(the request.s body: the server renders the prompt\)$' 10
t_send "/save $T_DIR/remote.session"
t_wait "^saved to $T_DIR/remote.session\$" 10
t_send "/bye"
t_wait_exit 20
[ "$T_STATUS" = 0 ] || fail "line mode: exit status $T_STATUS"
grep -aq "$url" "$T_DIR/remote.session" || fail "the session file lacks the endpoint"

# the saved remote chat: into a local model, and resumed with --session alone
printf '/load %s\n/show context\nMore please.\n' "$T_DIR/remote.session" |
    $T_CHAT -m "$model" -n 4 --verbose >"$out" 2>"$err" || fail "local /load: $(cat "$err")"
grep -q '^context: 0 / .* 4 messages$' "$err" || fail "local /load: $(cat "$err")"
grep -Eq '^prompt [0-9]{2,} tok' "$err" || fail "local model after the remote chat: $(cat "$err")"
n=$(requests)
printf 'And then?\n' | $T_BIN --session "$T_DIR/remote.session" -n 3 >"$out" 2>"$err" ||
    fail "--session alone: $(cat "$err")"
wait_requests $((n + 1)) || fail "--session alone did not reach the server"
wait_log '· 5 messages · ' || fail "the resumed chat did not send its transcript"

# full screen: the status bar says remote
t_start "$REMOTE --tui -n 4"
t_wait_status 'ready .*remote stories260K-chatml\.gguf .*used - tok' 20
# no sampler setting given: the server's own, not confab's defaults
t_status_has 'sampling: server default' || fail "tui: the server's sampling not said: $(t_status)"
t_status_has 'temp 0\.80|top-k 40' && fail "tui: sampler values the server does not use: $(t_status)"
t_type "Hi."
t_keys Enter
t_wait_status 'ready .*used [0-9]+ tok' 30
t_keys F6
t_wait_status "temp 0\.90 .*top-k: server's" 10
t_keys C-d
t_wait_exit 20

# the config file
mkdir -p "$XDG_CONFIG_HOME/confab"
printf 'endpoint = %s\nn-predict = 3\n' "$url" >"$XDG_CONFIG_HOME/confab/config"
n=$(requests)
$T_BIN -p "Hi." >"$out" 2>"$err" </dev/null || fail "config endpoint: $(cat "$err")"
wait_requests $((n + 1)) || fail "the config file's endpoint was not used"
rm "$XDG_CONFIG_HOME/confab/config"

# command-line errors: one line each, with its exit status
expect() { # expect STATUS PATTERN CMD...
    want=$1 pat=$2
    shift 2
    "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    [ $rc -eq "$want" ] || fail "$*: exit status $rc, not $want"
    [ "$(wc -l <"$err")" -eq 1 ] && grep -Eq "$pat" "$err" || fail "$*: stderr: $(cat "$err")"
}
unset CONFAB_NO_SUCH_KEY
expect 2 '^confab: --api-key-env: \$CONFAB_NO_SUCH_KEY is not set' \
    $REMOTE --api-key-env CONFAB_NO_SUCH_KEY -p x
expect 2 "^confab: --endpoint: 'ftp://x' is not an http:// or https:// URL" \
    $T_BIN --endpoint ftp://x -m m -p x
expect 2 '^confab: --timeout: ' $REMOTE --timeout soon -p x
expect 1 '^confab: cannot connect to http://127\.0\.0\.1:1/chat/completions' \
    $T_BIN --endpoint http://127.0.0.1:1 -m m -p x
# a refused port is a runtime error (1), -m or not: the option was good
expect 1 '^confab: --endpoint: no model given \(-m NAME\), and the server.s model list could not be read' \
    $T_BIN --endpoint http://127.0.0.1:1 -p x
t_done
