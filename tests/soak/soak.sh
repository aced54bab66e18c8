#!/bin/sh
# soak.sh [TURNS] [MAX_SLOPE]: a scripted chat of TURNS messages (default
# 1000) on stories260K-chatml in a 256-token context (a shift every turn or
# two), with /regen every 5th turn, /undo (and the message again) every
# 10th, /save every 50th, sampling the resident memory (VmRSS) after each
# turn.  Prints the RSS at the end of warm-up (the first fifth of the
# turns, at least 100, at most half) and at the end, and the least-squares
# slope after warm-up in KiB per 100 turns; fails on any error line, a bad
# exit status, a last session file that does not load, or a slope above
# MAX_SLOPE (default 64).
# SOAK_WRAP runs confab under a tool (e.g. "valgrind --leak-check=full
# --error-exitcode=99"; its RSS is then the tool's).
turns=${1:-1000} max_slope=${2:-64}
bin=${CONFAB_BIN:?CONFAB_BIN is not set}
# AddressSanitizer keeps freed memory in quarantine, so RSS grows by
# design: there the slope is reported, not judged (LeakSanitizer judges).
if ldd "$bin" 2>/dev/null | grep -q libasan; then
    max_slope=1000000000
    echo "soak: an AddressSanitizer build: the RSS slope is not checked"
fi
model=${CONFAB_SHARED:-../shared}/models/stories260K-chatml.gguf
[ -r "$model" ] || { echo "no $model: skipped"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/confab-soak.XXXXXX")
trap '[ -n "$SOAK_KEEP" ] || rm -rf "$dir"' EXIT
export HOME="$dir" XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/data" XDG_STATE_HOME="$dir/state"
mkfifo "$dir/in"
# shellcheck disable=SC2086
${SOAK_WRAP:-} "$bin" -m "$model" -c 256 -n 24 -t 1 --seed 7 --verbose <"$dir/in" >"$dir/out" 2>"$dir/err" &
pid=$!
exec 3>"$dir/in"
# the pid whose memory is read: confab's own, also under a wrapper
rss_of() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

replies=0 # stats lines confab has printed, one per reply
wait_replies() {
    while [ "$(grep -c '^prompt [0-9]* tok' "$dir/err")" -lt "$replies" ]; do
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.01
    done
}
fail() { echo "soak: $*"; cat "$dir/err" | grep -v '^prompt [0-9]* tok' | tail -5; exit 1; }

words="cat dog bird fish tree boat moon star cake ball"
i=1
while [ "$i" -le "$turns" ]; do
    w=$(echo "$words" | cut -d' ' -f$((i % 10 + 1)))
    printf 'Tell me about the %s number %d.\n' "$w" "$i" >&3
    replies=$((replies + 1))
    if [ $((i % 10)) -eq 0 ]; then
        printf '/undo\nTell me about the %s again.\n' "$w" >&3
        replies=$((replies + 1))
    fi
    if [ $((i % 5)) -eq 0 ]; then
        printf '/regen\n' >&3
        replies=$((replies + 1))
    fi
    [ $((i % 50)) -eq 0 ] && printf '/save %s/s%d.session\n' "$dir" $((i / 50 % 2)) >&3
    wait_replies || fail "confab ended at turn $i"
    echo "$i $(rss_of "$pid")" >>"$dir/rss"
    i=$((i + 1))
done
exec 3>&-
wait "$pid"
status=$?
[ "$status" -eq 0 ] || fail "exit status $status"
grep -q '^confab: ' "$dir/err" && fail "an error line"
shifts=$(grep -c '^context full: the oldest' "$dir/err")
[ "$shifts" -gt 0 ] || fail "no context shift happened"
last=$dir/s$((turns / 50 % 2)).session
[ "$turns" -lt 50 ] || "$bin" -m "$model" -c 256 -n 4 -t 1 --session "$last" -p "And then?" >/dev/null 2>"$dir/err2" ||
    fail "the last session file does not load: $(cat "$dir/err2")"

warm=$((turns / 5))
[ "$warm" -lt 100 ] && warm=100
[ "$warm" -ge "$turns" ] && warm=$((turns / 2))
awk -v warm="$warm" -v max="$max_slope" -v shifts="$shifts" '
    $1 == warm { w = $2 }
    $1 > warm { n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2; last = $2; t = $1 }
    END {
        slope = n > 1 ? (n * sxy - sx * sy) / (n * sxx - sx * sx) * 100 : 0
        printf "soak: %d turns, %d context shifts; RSS %d KiB after warm-up (turn %d), %d KiB at the end; slope after warm-up %.1f KiB per 100 turns\n", t, shifts, w, warm, last, slope
        exit slope > max ? 1 : 0
    }' "$dir/rss" || fail "RSS grows by more than $max_slope KiB per 100 turns"
