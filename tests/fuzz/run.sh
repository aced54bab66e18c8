#!/bin/sh
# run.sh FUZZER NAME SECONDS [LIBFUZZER OPTIONS...]: run one harness for
# SECONDS on its seeds and its regression inputs (regress/NAME, replayed
# first), one worker.  With CONFAB_FUZZ_CAMPAIGN set (campaign.sh) it also
# reads and grows the corpus that campaigns keep (BUILD/tests/fuzz/corpus/
# NAME); otherwise it starts from an empty one (corpus-short/NAME), because
# libFuzzer replays a whole corpus before its time limit counts, and a slow
# harness's kept corpus (slash: 1,165 inputs at 12 a second) outlasted the
# suite's time limit.  Under ASan and UBSan with a memory limit and a time
# limit per input; a crash, a leak, undefined behaviour, a broken promise,
# an input over its time or memory limit each end the run with a failure and
# leave the input in BUILD/tests/fuzz/crashes/ (add it to regress/NAME once
# fixed; a GGUF as a generator in seedgen.c's regress(), whose inputs join
# the seeds).
exe=$1 name=$2 secs=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$(dirname "$exe")" && pwd)
dict=$here/dict/$name.dict
corpus=$build/corpus/$name
if [ -z "${CONFAB_FUZZ_CAMPAIGN:-}" ]; then
    corpus=$build/corpus-short/$name
    rm -rf "$corpus"
fi
mkdir -p "$corpus" "$build/crashes"
case $name in
gguf | llama2c | session) max_len=65536 ;;
tokenizer | jinja | json | stream | serve | markdown) max_len=16384 ;;
*) max_len=4096 ;;
esac
quiet=
case $name in config | slash) quiet=-close_fd_mask=2 ;; esac
# libFuzzer's own failure statuses (77 above all) would read as "skipped" to meson
set -- -max_total_time="$secs" -timeout=10 -error_exitcode=1 -timeout_exitcode=1 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -max_len=$max_len -print_final_stats=1 -artifact_prefix="$build/crashes/$name-" $quiet \
    ${CONFAB_FUZZ_OPTS:-} "$@"
[ -f "$dict" ] && set -- -dict="$dict" "$@"
regress=$here/regress/$name
[ -d "$regress" ] || regress= # git keeps no empty folder
exec "$exe" "$@" "$corpus" "$build/seeds/$name" ${regress:+"$regress"}
