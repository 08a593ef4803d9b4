#!/bin/sh
# Builds the bare-Boa component (boa_engine 0.22, pith's codemode features and release
# profile) for wasm32-wasip2, outside the repository. Needs nothing but rustup's
# wasm32-wasip2 target.
# Usage: bench/engines/boa-minimal/build.sh [OUT_DIR]   (default /tmp/engines-bench)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/engines-bench}
src="$out/tree/bench/engines"
mkdir -p "$src" && cp -r "$here/../wit" "$here/../boa-minimal" "$src/"
cd "$src/boa-minimal"
CARGO_TARGET_DIR="$out/target/guests" nice -n 19 cargo build -j 1 --release --target wasm32-wasip2
cp "$out/target/guests/wasm32-wasip2/release/boa_minimal_engine.wasm" "$out/boa-minimal.wasm"
ls -l "$out/boa-minimal.wasm"
