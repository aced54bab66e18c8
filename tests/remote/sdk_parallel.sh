#!/bin/sh
# confab serve --parallel 4 under load, through the official openai npm
# package (sdk_parallel.cjs): every streamed request answered, each with the
# same tokens and probabilities as when it ran alone, and the server's
# memory flat.  Skipped as sdk_openai.sh is.
set -u
. "$(dirname "$0")/sdk_env.sh"
model="$CONFAB_SHARED/models/stories260K-chatml.gguf"
[ -f "$model" ] || skip "no ../shared"
sdk_install
sdk_serve -m "$model" -t 2 -np 4 -c 2048 --model-id tiny
CONFAB_URL="http://127.0.0.1:$port/v1" CONFAB_PID=$pid NODE_PATH="$dir/node_modules" \
    timeout 240 node "$(dirname "$0")/sdk_parallel.cjs"
rc=$?
kill "$pid"
wait "$pid"
[ $rc -eq 0 ] || { echo "server log:"; tail -20 "$log"; }
rm -f "$log"
exit $rc
