#!/bin/sh
# fake_stores.sh DIR MODELS: the model stores of a machine that has used
# ollama, the Hugging Face hub, llama.cpp and LM Studio, in their real
# layouts, under DIR/home (as HOME) and DIR/data (as XDG_DATA_HOME), their
# files links to MODELS' GGUF files.  What each name should mean is in
# test_store.c and models.sh.
set -e
dir=$1
models=$(cd "$2" && pwd)
home=$dir/home
mkdir -p "$home"

# confab's own folder: a model, a damaged file, a split model
own=$dir/data/confab/models
mkdir -p "$own"
ln -s "$models/stories260K.gguf" "$own/stories260K.gguf"
printf 'GGUF\003\000\000\000\002' >"$own/broken.gguf"
ln -s "$models/quant-Q8_0.gguf" "$own/big-00001-of-00002.gguf"
ln -s "$models/quant-Q8_0.gguf" "$own/big-00002-of-00002.gguf"

# ollama: manifests/<registry>/<namespace>/<model>/<tag>, blobs/sha256-<hex>
ol=$home/.ollama/models
mkdir -p "$ol/blobs"
zeros=0000000000000000000000000000000000000000000000000000000000000000
manifest() { # manifest REGISTRY/NAMESPACE/MODEL/TAG FILE (FILE "-": its blob is gone)
    if [ "$2" = - ]; then
        hex=$zeros size=1
    else
        hex=$(sha256sum "$2" | cut -d' ' -f1) size=$(wc -c <"$2")
        ln -sf "$2" "$ol/blobs/sha256-$hex"
    fi
    mkdir -p "$(dirname "$ol/manifests/$1")"
    cat >"$ol/manifests/$1" <<JSON
{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:$zeros","size":487},"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:$hex","size":$size},{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:$zeros","size":1},{"mediaType":"application/vnd.ollama.image.params","digest":"sha256:$zeros","size":1}]}
JSON
}
manifest registry.ollama.ai/library/qwen3/0.6b "$models/qwen3-bpe.Q8_0.gguf"
manifest registry.ollama.ai/library/qwen3/1.7b "$models/qwen3.Q8_0.gguf"
manifest registry.ollama.ai/someone/tiny/latest "$models/stories260K-chatml.gguf"
manifest hf.co/bartowski/SmolLM2-135M-Instruct-GGUF/Q8_0 "$models/llama-bpe.Q8_0.gguf"
manifest registry.ollama.ai/library/gone/latest -

# the Hugging Face hub: models--<org>--<repo>/{blobs,refs/main,snapshots/<commit>}
hub=$home/.cache/huggingface/hub
hubfile() { # hubfile ORG--REPO COMMIT PATH FILE (FILE "-": the blob is missing)
    repo=$hub/models--$1
    mkdir -p "$repo/blobs" "$repo/refs" "$(dirname "$repo/snapshots/$2/$3")"
    if [ "$4" = - ]; then
        sha=$zeros.incomplete
    else
        sha=$(sha256sum "$4" | cut -d' ' -f1)
        ln -sf "$4" "$repo/blobs/$sha"
    fi
    up=../..
    case $3 in */*) up=../../.. ;; esac
    ln -s "$up/blobs/$sha" "$repo/snapshots/$2/$3"
}
main=5a6fd4ba2f1bba1e9e7c18a6e3d4d0b3ea0e4a01
old=0d3e5c76a9c1b2f3e4d5c6b7a8f9e0d1c2b3a4f5
hubfile Qwen--Qwen3-0.6B-GGUF $main Qwen3-0.6B-Q8_0.gguf "$models/qwen3-bpe.Q8_0.gguf"
hubfile Qwen--Qwen3-0.6B-GGUF $main Qwen3-0.6B-Q4_K_M.gguf "$models/qwen3.Q4_K_M.gguf"
hubfile Qwen--Qwen3-0.6B-GGUF $main BF16/Qwen3-0.6B-BF16.gguf "$models/quant-BF16.gguf"
hubfile Qwen--Qwen3-0.6B-GGUF $main mmproj-Qwen3-0.6B-F16.gguf "$models/quant-F16.gguf"
hubfile Qwen--Qwen3-0.6B-GGUF $main Qwen3-0.6B-Q2_K.gguf -
hubfile Qwen--Qwen3-0.6B-GGUF $old Qwen3-0.6B-Q8_0.gguf "$models/qwen3.Q8_0.gguf"
hubfile Qwen--Qwen3-0.6B-GGUF $old Qwen3-0.6B-F16.gguf "$models/quant-F16.gguf"
printf '%s' $main >"$hub/models--Qwen--Qwen3-0.6B-GGUF/refs/main"
touch -d '2025-01-01' "$hub/models--Qwen--Qwen3-0.6B-GGUF/snapshots/$old"
hubfile bartowski--SmolLM2-135M-Instruct-GGUF $main SmolLM2-135M-Instruct-Q8_0.gguf \
    "$models/llama-bpe.Q8_0.gguf"
printf '%s\n' $main >"$hub/models--bartowski--SmolLM2-135M-Instruct-GGUF/refs/main"
# two files showing one quant type: each goes by its file name
hubfile someone--two-GGUF $main two-Q8_0.gguf "$models/quant-Q8_0.gguf"
hubfile someone--two-GGUF $main two-instruct-Q8_0.gguf "$models/quant-Q8_0.gguf"
printf '%s' $main >"$hub/models--someone--two-GGUF/refs/main"

# llama.cpp's cache: <org>_<repo>_<file>, named by manifest=<org>=<repo>=<tag>.json
# or by an older <file>.json's url
lc=$home/.cache/llama.cpp
mkdir -p "$lc"
ln -s "$models/granite.Q8_0.gguf" "$lc/bartowski_SmolLM2-135M-Instruct-GGUF_SmolLM2-135M-Instruct-Q8_0.gguf"
printf '"0a1b2c"' >"$lc/bartowski_SmolLM2-135M-Instruct-GGUF_SmolLM2-135M-Instruct-Q8_0.gguf.etag"
cat >"$lc/manifest=bartowski=SmolLM2-135M-Instruct-GGUF=Q8_0.json" <<'JSON'
{"ggufFile":{"rfilename":"SmolLM2-135M-Instruct-Q8_0.gguf","blobId":"0a1b2c","size":1}}
JSON
ln -s "$models/gemma3.Q8_0.gguf" "$lc/unsloth_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q8_0.gguf"
cat >"$lc/unsloth_gemma-3-1b-it-GGUF_gemma-3-1b-it-Q8_0.gguf.json" <<'JSON'
{"etag":"\"0a1b2c\"","lastModified":"Thu, 13 Mar 2025 10:00:00 GMT","url":"https://huggingface.co/unsloth/gemma-3-1b-it-GGUF/resolve/main/gemma-3-1b-it-Q8_0.gguf"}
JSON
ln -s "$models/olmo2.Q8_0.gguf" "$lc/my-model.gguf"

# LM Studio: models/<publisher>/<repo>/, and its older folder
lms=$home/.lmstudio/models/lmstudio-community/Phi-3-mini-GGUF
mkdir -p "$lms"
ln -s "$models/phi3.Q8_0.gguf" "$lms/Phi-3-mini-Q8_0.gguf"
lms=$home/.cache/lm-studio/models/TheBloke/Llama-2-7B-GGUF
mkdir -p "$lms"
ln -s "$models/llama-spm.Q8_0.gguf" "$lms/llama-2-7b.Q8_0.gguf"
