#!/bin/sh
# Builds the QuickJS component (rquickjs 0.14 = quickjs-ng) for wasm32-wasip2, outside the
# repository. Needs Debian's clang-19, llvm-19 and wasi-libc
# (apt-get install clang-19 llvm-19 wasi-libc): the C sources compile with clang-19 against
# Debian's wasi-libc headers, instead of the wasi-sdk that rquickjs-sys would download from
# GitHub (RQUICKJS_SYS_NO_WASI_SDK=1); Rust's wasm32-wasip2 target links its own wasi-libc.
# Usage: bench/engines/quickjs/build.sh [OUT_DIR]   (default /tmp/engines-bench)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/engines-bench}
src="$out/tree/bench/engines"
mkdir -p "$src" && cp -r "$here/../wit" "$here/../quickjs" "$src/"
cd "$src/quickjs"
cargo fetch --target wasm32-wasip2 >/dev/null
# A sysroot whose include/ is Debian's wasi-libc headers (and nothing of the host's).
mkdir -p "$out/wasi-sysroot"
ln -sfn /usr/include/wasm32-wasi "$out/wasi-sysroot/include"
export RQUICKJS_SYS_NO_WASI_SDK=1
export CC_wasm32_wasip2=clang-19 AR_wasm32_wasip2=llvm-ar-19
export CFLAGS_wasm32_wasip2="--sysroot=$out/wasi-sysroot"
CARGO_TARGET_DIR="$out/target/guests" nice -n 19 cargo build -j 1 --release --target wasm32-wasip2
cp "$out/target/guests/wasm32-wasip2/release/quickjs_engine.wasm" "$out/quickjs.wasm"
ls -l "$out/quickjs.wasm"
