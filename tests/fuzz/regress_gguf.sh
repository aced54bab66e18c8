#!/bin/sh
# regress_gguf.sh CONFAB SEEDGEN REPLAY: fuzz_gguf's findings, made from two
# tiny models mkmodel writes with seedgen's vocabulary (seedgen regress),
# replayed through the harness.  Needs no fixture.
set -e
confab=$1 gen=$2 replay=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp"
tiny="arch=llama,embd=32,layers=1,heads=2,ctx=64"
"$confab" mkmodel --dims "$tiny,ff=32" --type Q8_0 -t 1 --vocab "$tmp/tiny-spm.gguf" \
    -o "$tmp/q8_0.gguf" >/dev/null
"$confab" mkmodel --dims "$tiny,ff=256,tied=1" --type TQ2_0 --pure -t 1 --vocab "$tmp/tiny-spm.gguf" \
    -o "$tmp/tq2_0.gguf" >/dev/null
mkdir "$tmp/inputs"
"$gen" regress "$tmp/inputs" "$tmp/q8_0.gguf" "$tmp/tq2_0.gguf"
"$replay" "$tmp/inputs"
