#!/bin/sh
# Builds every engine component and the harness under OUT_DIR (default /tmp/engines-bench;
# nothing is written into the repository), then measures them in one run.
# Usage: bench/engines/run.sh [--no-build]          (env: OUT_DIR, RUNS, COMPUTE_RUNS, COMPILE_RUNS)
# Needs: rustup's wasm32-wasip2 target, node + npm, and Debian's clang-19, llvm-19 and
# wasi-libc (for QuickJS's C sources), plus pith's own codemode artifacts, which pith's
# build makes (cargo build --release in the repository):
#   target/wasm-plugins/wasm32-wasip2/release/codemode.wasm
#   target/release/build/pith-*/out/precompiled/codemode.initialized.wasm
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${OUT_DIR:-/tmp/engines-bench}
mkdir -p "$out"
bench="$out/target/release/engines-bench"
if [ "${1:-}" != "--no-build" ]; then
  "$here/starlingmonkey/build.sh" "$out"
  "$here/quickjs/build.sh" "$out"
  "$here/boa-minimal/build.sh" "$out"
  # The harness builds from a copy whose layout keeps its WIT paths (../wit, ../../../wit).
  mkdir -p "$out/tree/bench/engines"
  rm -rf "$out/tree/wit" "$out/tree/bench/engines/harness"
  cp -r "$repo/wit" "$out/tree/wit"
  cp -r "$here/wit" "$here/harness" "$out/tree/bench/engines/"
  (cd "$out/tree/bench/engines/harness" &&
    CARGO_TARGET_DIR="$out/target" nice -n 19 cargo build -j 1 --release)
  "$bench" wizer "$out/quickjs.wasm" "$out/quickjs.initialized.wasm"
  "$bench" wizer "$out/boa-minimal.wasm" "$out/boa-minimal.initialized.wasm"
fi
plain="$repo/target/wasm-plugins/wasm32-wasip2/release/codemode.wasm"
init=$(ls "$repo"/target/release/build/pith-*/out/precompiled/codemode.initialized.wasm | head -n1)
echo "load before: $(cat /proc/loadavg)" >&2
"$bench" --runs "${RUNS:-50}" --compute-runs "${COMPUTE_RUNS:-5}" \
  --compile-runs "${COMPILE_RUNS:-3}" --json "$out/results.json" \
  "codemode=codemode:$plain" \
  "codemode-initialized=codemode:$init" \
  "boa=simple:$out/boa-minimal.wasm" \
  "boa-initialized=simple:$out/boa-minimal.initialized.wasm" \
  "quickjs=simple:$out/quickjs.wasm" \
  "quickjs-initialized=simple:$out/quickjs.initialized.wasm" \
  "starlingmonkey=simple:$out/starlingmonkey.wasm"
echo "load after: $(cat /proc/loadavg)" >&2
