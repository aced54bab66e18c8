#!/bin/sh
# run-aarch64.sh BUILD_DIR: cross-build confab's library and its kernel,
# model and forward tests for aarch64 (cross/aarch64-linux-gnu.ini) and run
# them under qemu-user twice: -cpu cortex-a72 (ARMv8.0, plain NEON) and
# -cpu max (dotprod, i8mm).  Ends with "N passed, M failed" over both.
build=${1:-build-aarch64}
src=$(dirname "$0")/..
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$src" --cross-file "$src/cross/aarch64-linux-gnu.ini" -Dcli=false >/dev/null ||
        { echo "0 passed, 1 failed"; exit 1; }
fi
ninja -C "$build" >/dev/null || { echo "0 passed, 1 failed"; exit 1; }
ok=0 fail=0
for cpu in cortex-a72 max; do
    start=$(date +%s)
    log=$(mktemp)
    QEMU_CPU=$cpu meson test -C "$build" --print-errorlogs --num-processes 2 --timeout-multiplier 4 >"$log" 2>&1
    count() { awk -v k="$1" 'index($0, k) == 1 { n = $NF } END { print n + 0 }' "$log"; }
    o=$(count "Ok:")
    f=$(( $(count "Fail:") + $(count "Timeout:") + $(count "Unexpected Pass:") ))
    [ "$f" -gt 0 ] && grep -E "^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT)" "$log"
    echo "aarch64 -cpu $cpu: $o passed, $f failed in $(( $(date +%s) - start )) s"
    rm -f "$log"
    ok=$((ok + o))
    fail=$((fail + f))
done
echo "$ok passed, $fail failed"
[ "$fail" -eq 0 ]
