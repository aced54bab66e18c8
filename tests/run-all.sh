#!/bin/sh
# run-all.sh BUILD_DIR: build, run every test (with the aarch64 build's
# under qemu where the cross tools are: run-aarch64.sh, in BUILD_DIR-aarch64),
# end with "N passed, M failed"
# (also written to BUILD_DIR/test-summary, for .ci/run to repeat after
# make's own error line when something failed).
build=${1:-build}
summary() { echo "$1"; echo "$1" >"$build/test-summary"; }
ninja -C "$build" || { summary "0 passed, 1 failed"; exit 1; }
log=$(mktemp)
# meson's own status, not tee's
{ meson test -C "$build" --print-errorlogs --num-processes 2 2>&1; echo $? >"$log.rc"; } | tee "$log"
status=$(cat "$log.rc")
# meson's summary lines: "Ok:  3", "Unexpected Pass:  0", ...
count() { awk -v k="$1" 'index($0, k) == 1 { print $NF; found = 1 } END { if (!found) print 0 }' "$log"; }
ok=$(count "Ok:")
fail=$(( $(count "Fail:") + $(count "Timeout:") + $(count "Unexpected Pass:") ))
skipped=$(count "Skipped:")
rm -f "$log" "$log.rc"
[ "$status" -ne 0 ] && [ "$fail" -eq 0 ] && fail=1
# the aarch64 build under qemu, where the cross tools are installed
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && command -v qemu-aarch64 >/dev/null 2>&1; then
    line=$(sh "$(dirname "$0")/run-aarch64.sh" "$build-aarch64" | tee -a /dev/stderr | tail -n 1)
    ok=$((ok + $(echo "$line" | awk '{ print $1 + 0 }')))
    fail=$((fail + $(echo "$line" | awk '{ print $3 + 0 }')))
fi
[ "$skipped" -gt 0 ] && echo "($skipped skipped)"
summary "$ok passed, $fail failed"
[ "$fail" -eq 0 ]
