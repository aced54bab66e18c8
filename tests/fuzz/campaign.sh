#!/bin/sh
# campaign.sh BUILD SECONDS [NAME...]: a longer fuzzing campaign in the
# -Dfuzz=true build BUILD: each harness (all without NAMEs) for SECONDS, one
# after another and one worker each (the machine is shared), then per
# harness: executions, executions per second, coverage (libFuzzer's cov:
# edges and ft: features at the end), new crash inputs and how the run
# ended.  Each run goes on from the corpus the earlier ones left; logs in
# BUILD/tests/fuzz/logs/NAME.log, crash inputs in BUILD/tests/fuzz/crashes/.
build=${1:?usage: campaign.sh BUILD SECONDS [NAME...]}
secs=${2:?usage: campaign.sh BUILD SECONDS [NAME...]}
shift 2
names=${*:-gguf llama2c tokenizer jinja json session config slash stream serve markdown}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(cd "$build" && pwd)/tests/fuzz
mkdir -p "$dir/logs" "$dir/crashes"
crashes() { ls "$dir/crashes" | grep -c "^$1-"; }
printf '%-10s %12s %8s %7s %7s %8s  %s\n' harness executions exec/s cov ft crashes ended
for n in $names; do
    log=$dir/logs/$n.log
    before=$(crashes "$n")
    CONFAB_FUZZ_CAMPAIGN=1 "$here/run.sh" "$dir/fuzz_$n" "$n" "$secs" >"$log" 2>&1
    rc=$?
    stat() { awk -v k="stat::$1:" '$1 == k { print $2 }' "$log"; }
    cov=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 |
        sed -E 's/.*cov: ([0-9]+) ft: ([0-9]+).*/\1 \2/')
    ended=ok
    [ "$rc" -ne 0 ] && ended="failed (status $rc): $(grep -a -m1 -E 'ERROR|runtime error|broken promise|ALARM' "$log")"
    printf '%-10s %12s %8s %7s %7s %8s  %s\n' "$n" "$(stat number_of_executed_units)" \
        "$(stat average_exec_per_sec)" "${cov% *}" "${cov#* }" $(($(crashes "$n") - before)) "$ended"
done
