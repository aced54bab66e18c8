#!/bin/sh
# The official openai npm package (pinned) against confab serve: install it
# into the build folder on first use, start the server, run the client
# script (sdk_openai.cjs, or the one named first; the server's further
# arguments after it, where "SHARED/" stands for ../shared).  Skipped, with
# the reason, where node, npm, the registry or ../shared is not there.
set -u
script=${1:-sdk_openai.cjs}
[ $# -gt 0 ] && shift
VERSION=6.49.0
skip() { echo "skipped: $*"; exit 77; }
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || skip "no node or npm"
[ -f "$CONFAB_SHARED/models/stories260K-chatml.gguf" ] || skip "no ../shared"
dir=$(dirname "$CONFAB_BIN")/tests/npm
if [ ! -f "$dir/node_modules/openai/package.json" ] ||
   ! grep -q "\"version\": \"$VERSION\"" "$dir/node_modules/openai/package.json"; then
    mkdir -p "$dir"
    timeout 180 npm install --prefix "$dir" --no-audit --no-fund --silent "openai@$VERSION" \
        >"$dir/install.log" 2>&1 ||
        skip "npm install openai@$VERSION failed (no registry?): $(tail -1 "$dir/install.log")"
fi
log=$(mktemp /tmp/confab-sdk-XXXXXX)
# a piece every 5 ms, so that an abort lands mid-reply
for a in "$@"; do
    set -- "$@" "$(echo "$a" | sed "s|^SHARED/|$CONFAB_SHARED/|")"
    shift
done
CONFAB_TEST_KEY=sdk-key-1 CONFAB_TEST_TOKEN_DELAY_MS=5 "$CONFAB_BIN" serve -m "$CONFAB_SHARED/models/stories260K-chatml.gguf" \
    --port 0 -t 1 --api-key-env CONFAB_TEST_KEY --model-id tiny "$@" 2>"$log" &
pid=$!
port=
for _ in $(seq 100); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/v1.*|\1|p' "$log")
    [ -n "$port" ] && break
    sleep 0.1
done
if [ -z "$port" ]; then
    echo "confab serve did not start:"; cat "$log"; kill "$pid" 2>/dev/null; exit 1
fi
CONFAB_URL="http://127.0.0.1:$port/v1" CONFAB_KEY=sdk-key-1 CONFAB_PID=$pid NODE_PATH="$dir/node_modules" \
    timeout 120 node "$(dirname "$0")/$script"
rc=$?
kill "$pid"
wait "$pid"
if [ "$script" = sdk_openai.cjs ] && ! grep -q "cut: the client went away" "$log"; then
    echo "FAIL the aborted reply was not cut"
    rc=1
fi
[ $rc -eq 0 ] || { echo "server log:"; tail -20 "$log"; }
rm -f "$log"
exit $rc
