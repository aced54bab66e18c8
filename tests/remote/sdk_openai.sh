#!/bin/sh
# The official openai npm package (pinned) against confab serve: install it
# into the build folder on first use, start the server, run sdk_openai.cjs.
# Skipped, with the reason, where node, npm, the registry or ../shared is
# not there.
set -u
. "$(dirname "$0")/sdk_env.sh"
[ -f "$CONFAB_SHARED/models/stories260K-chatml.gguf" ] || skip "no ../shared"
sdk_install
# a piece every 5 ms, so that an abort lands mid-reply
CONFAB_TEST_KEY=sdk-key-1 CONFAB_TEST_TOKEN_DELAY_MS=5 sdk_serve \
    -m "$CONFAB_SHARED/models/stories260K-chatml.gguf" -t 1 --api-key-env CONFAB_TEST_KEY --model-id tiny
CONFAB_URL="http://127.0.0.1:$port/v1" CONFAB_KEY=sdk-key-1 NODE_PATH="$dir/node_modules" \
    timeout 120 node "$(dirname "$0")/sdk_openai.cjs"
rc=$?
kill "$pid"
wait "$pid"
if ! grep -q "cut: the client went away" "$log"; then
    echo "FAIL the aborted reply was not cut"
    rc=1
fi
[ $rc -eq 0 ] || { echo "server log:"; tail -20 "$log"; }
rm -f "$log"
exit $rc
