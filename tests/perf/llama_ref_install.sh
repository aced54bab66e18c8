# Sourced by side_by_side.sh: node-llama-cpp's prebuilt
# llama.cpp in $npmdir (build/tests/npm-llama), installed on first use:
# $npmdir/native (every CPU variant, the best chosen at load) and
# $npmdir/avx2 (its haswell variant alone: AVX2, FMA, F16C).
VERSION=3.22.1
npmdir=$root/build/tests/npm-llama
llama_ref_install() {
    [ -f "$npmdir/native/node_modules/node-llama-cpp/package.json" ] && return 0
    command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { echo "needs node and npm" >&2; return 1; }
    mkdir -p "$npmdir/native"
    # --ignore-scripts: the prebuilt binaries are packages; nothing is built or fetched after
    npm install --prefix "$npmdir/native" --no-audit --no-fund --silent --ignore-scripts \
        "node-llama-cpp@$VERSION" >"$npmdir/install.log" 2>&1 ||
        { echo "npm install node-llama-cpp@$VERSION failed: $(tail -1 "$npmdir/install.log")" >&2; return 1; }
    rm -rf "$npmdir/native/node_modules/@node-llama-cpp/"*cuda* "$npmdir/native/node_modules/@node-llama-cpp/"*vulkan*
    cp -r "$npmdir/native" "$npmdir/avx2"
    find "$npmdir/avx2/node_modules/@node-llama-cpp/linux-x64" -name 'libggml-cpu-*.so' ! -name '*haswell*' -delete
}
