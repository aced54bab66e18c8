# Sourced by the openai-package tests: sdk_install puts the pinned package
# into the build folder on first use (skipping, with the reason, without
# node, npm or the registry); sdk_serve ARGS... starts confab serve on a
# free port with ARGS, leaving $pid, $port and its log in $log.
VERSION=6.49.0
skip() { echo "skipped: $*"; exit 77; }
sdk_install() {
    command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || skip "no node or npm"
    dir=$(dirname "$CONFAB_BIN")/tests/npm
    if [ ! -f "$dir/node_modules/openai/package.json" ] ||
       ! grep -q "\"version\": \"$VERSION\"" "$dir/node_modules/openai/package.json"; then
        mkdir -p "$dir"
        timeout 180 npm install --prefix "$dir" --no-audit --no-fund --silent "openai@$VERSION" \
            >"$dir/install.log" 2>&1 ||
            skip "npm install openai@$VERSION failed (no registry?): $(tail -1 "$dir/install.log")"
    fi
}
sdk_serve() {
    log=$(mktemp /tmp/confab-sdk-XXXXXX)
    "$CONFAB_BIN" serve --port 0 "$@" 2>"$log" &
    pid=$!
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\)/v1.*|\1|p' "$log")
        [ -n "$port" ] && return 0
        sleep 0.1
    done
    echo "confab serve did not start:"; cat "$log"; kill "$pid" 2>/dev/null; exit 1
}
