#!/bin/sh
# insns-per-block.sh BUILD_DIR TYPE... : guest instructions one
# cf_vec_dot of k = 4096 executes per unit of its type (a block of 32, a
# super-block of 256, or 32 elements for F32/F16/BF16; act-Q8_0, act-Q8_1,
# act-Q8_K: that activation quantizer's, per block) at each level qemu
# runs, counted from its -d in_asm,exec,nochain log: each translated
# block's length times its executions, 11 dots less 1, over 10.
# BUILD_DIR: an aarch64 build (tests/run-aarch64.sh; levels scalar, neon,
# dotprod under qemu-aarch64 -cpu max) or an x86-64 one made with
# -Dnative=false (scalar, avx2 under qemu-x86_64 -cpu max, which has no
# AVX-512).  Instructions, not time.
build=${1:?usage: insns-per-block.sh BUILD_DIR TYPE...}
shift
src=$(dirname "$0")/..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the ELF machine of the library's first object: 0xb7 aarch64, else x86-64
if [ "$(ar p "$build/libconfab.a" | od -An -tx1 -j18 -N1 | tr -d ' ')" = b7 ]; then
    cc=aarch64-linux-gnu-gcc qemu="qemu-aarch64 -L /usr/aarch64-linux-gnu" levels="scalar neon dotprod"
else
    cc=gcc qemu=qemu-x86_64 levels="scalar avx2"
fi
$cc -O2 -I"$src/include" "$src/cross/insns-per-block.c" "$build/libconfab.a" -fopenmp -lm -lpthread -o "$tmp/drv" ||
    exit 1
count() { # TYPE LEVEL REPS: the instructions the whole run executed
    $qemu -cpu max -d in_asm,exec,nochain -D "$tmp/log" "$tmp/drv" "$@" >/dev/null || return 1
    awk '/^Trace / { split($0, f, "/"); n[f[2]]++; next }
         /^0x[0-9a-f]+:/ { pc = substr($1, 3, length($1) - 3); sub(/^0+/, "", pc)
                           if (cur == "") { cur = pc; len[cur] = 0 }; len[cur]++; next }
         { cur = "" }
         END { for (p in n) { q = p; sub(/^0+/, "", q); t += n[p] * len[q] }; printf "%d\n", t }' "$tmp/log"
}
printf '%-8s' type
printf ' %10s' $levels
printf '\n'
for t in "$@"; do
    case $t in
    F32 | F16 | BF16) units=128 ;;
    Q4_0 | Q4_1 | Q5_0 | Q5_1 | Q8_0 | IQ4_NL | MXFP4 | act-Q8_0 | act-Q8_1) units=128 ;;
    *) units=16 ;;
    esac
    printf '%-8s' "$t"
    for level in $levels; do
        a=$(count "$t" $level 1) && b=$(count "$t" $level 11) || { printf ' %10s' '-'; continue; }
        awk -v a="$a" -v b="$b" -v u=$units 'BEGIN { printf " %10.1f", (b - a) / 10 / u }'
    done
    printf '\n'
done
