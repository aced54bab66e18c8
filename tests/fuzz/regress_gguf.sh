#!/bin/sh
# regress_gguf.sh CONFAB SEEDGEN REPLAY: fuzz_gguf's findings, made from four
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
"$confab" mkmodel --dims "arch=gpt-oss,embd=32,layers=1,heads=2,ctx=64,ff=32,experts=4,experts_used=2,expert_ff=32" \
    --type Q8_0 -t 1 --vocab "$tmp/tiny-bpe.gguf" -o "$tmp/moe.gguf" >/dev/null
"$confab" mkmodel --dims "arch=gemma4,embd=32,layers=2,heads=2,ctx=64,ff=32,swa=4,swa_period=2,ple=8" \
    --type Q8_0 -t 1 --vocab "$tmp/tiny-bpe.gguf" -o "$tmp/swa.gguf" >/dev/null
mkdir "$tmp/inputs"
"$gen" regress "$tmp/inputs" "$tmp/q8_0.gguf" "$tmp/tq2_0.gguf" "$tmp/moe.gguf" "$tmp/swa.gguf"
"$replay" "$tmp/inputs"
