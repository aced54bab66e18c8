#!/bin/sh
# side_by_side.sh [-i avx2|native] [-p N] [-n N] [-r N] [-t N] [-l N] [-k ROUNDS] FILE...
# confab bench and llama.cpp (node-llama-cpp's prebuilt CPU build, installed
# into build/tests/npm-llama on first use) on the same files, alternating
# file by file for ROUNDS rounds, then one table of mean ± sd over the rounds.
# -i avx2: confab at CONFAB_ISA=avx2 and llama.cpp's haswell variant alone
# (AVX2, FMA, F16C: what an AVX2-only CPU runs); native: each at its best.
# -l N: llama.cpp's threads (default -t's; on a 2-core VM its decode is
# faster with 1 thread than 2, so compare at both).
# A program that prints figures, not a test.
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
confab=${CONFAB_BIN:-$root/build/confab}
isa=native p=256 n=64 r=3 t=2 k=2 l=
while getopts i:p:n:r:t:l:k: o; do
    case $o in i) isa=$OPTARG ;; p) p=$OPTARG ;; n) n=$OPTARG ;; r) r=$OPTARG ;; t) t=$OPTARG ;; l) l=$OPTARG ;;
    k) k=$OPTARG ;; *) sed -n 2,11p "$0"; exit 2 ;; esac
done
l=${l:-$t}
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n 2,11p "$0"; exit 2; }
. "$here/llama_ref_install.sh"
llama_ref_install || exit 1
variant=native cisa=
[ "$isa" = avx2 ] && variant=avx2 cisa=avx2
cp "$here/llama_ref.mjs" "$npmdir/$variant/llama_ref.mjs"
out=$(mktemp)
i=0
while [ $i -lt "$k" ]; do
    for f in "$@"; do
        echo "round $((i + 1)): $(basename "$f")" >&2
        c=$(CONFAB_ISA=$cisa "$confab" bench -m "$f" -p "$p" -n "$n" -r "$r" -t "$t" --json 2>/dev/null)
        lj=$(node "$npmdir/$variant/llama_ref.mjs" "$f" "$p" "$n" "$r" "$l" 2>/dev/null)
        echo "{\"file\": \"$(basename "$f")\", \"confab\": ${c:-null}, \"llama\": ${lj:-null}}" >>"$out"
    done
    i=$((i + 1))
done
node - "$out" "$isa" "$p" "$n" "$t" "$l" <<'JS'
const fs = require("fs");
const [file, isa, p, n, t, l] = process.argv.slice(2);
const rows = fs.readFileSync(file, "utf8").trim().split("\n").map(JSON.parse);
const ms = a => { a = a.filter(x => x != null); if (!a.length) return "-";
    const m = a.reduce((x, y) => x + y, 0) / a.length;
    const s = Math.sqrt(a.reduce((x, y) => x + (y - m) ** 2, 0) / Math.max(1, a.length - 1));
    return `${m.toFixed(1)} ± ${s.toFixed(1)}`; };
const first = rows.find(r => r.llama);
if (first) console.log(`llama.cpp ${first.llama.release.repo} ${first.llama.release.release} (node-llama-cpp prebuilt): ${first.llama.cpu}`);
console.log(`confab -t ${t}, llama.cpp -t ${l}, pp${p} / tg${n}, ${isa}, mean ± sd over rounds (each the mean of its -r runs)\n`);
console.log(`| file | llama.cpp pp / tg | confab pp / tg | pp ratio | tg ratio | confab roofline | probe GB/s |`);
console.log(`|---|---|---|---|---|---|---|`);
for (const f of [...new Set(rows.map(r => r.file))]) {
    const rs = rows.filter(r => r.file === f);
    const g = (e, k) => rs.map(r => r[e] ? r[e][k] : null);
    const ratio = k => rs.map(r => r.confab && r.llama ? r.confab[k] / r.llama[k] : null);
    console.log(`| ${f} | ${ms(g("llama", "pp_tps"))} / ${ms(g("llama", "tg_tps"))} | ${ms(g("confab", "pp_tps"))} / ` +
                `${ms(g("confab", "tg_tps"))} | ${ms(ratio("pp_tps"))} | ${ms(ratio("tg_tps"))} | ` +
                `${ms(g("confab", "run_roofline_fraction").map(x => x == null ? x : 100 * x))} % | ` +
                `${ms(g("confab", "bandwidth_gbs"))} |`);
}
JS
rm -f "$out"
