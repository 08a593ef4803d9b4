#!/bin/sh
# Builds the StarlingMonkey component with componentize-js (npm), outside the repository.
# Usage: bench/engines/starlingmonkey/build.sh [OUT_DIR]   (default /tmp/engines-bench)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/engines-bench}
mkdir -p "$out/sm"
cd "$out/sm"
[ -f package.json ] || npm init -y >/dev/null
[ -d node_modules/@bytecodealliance/componentize-js ] ||
  npm install --no-save @bytecodealliance/componentize-js@0.23.0 >/dev/null
# No http/fetch-event: the engine needs none of it (stdio, random, clocks stay: the
# StarlingMonkey runtime imports them).
npx componentize-js "$here/engine.js" --wit "$here/../wit/js-engine.wit" -n js-engine \
  -d http -d fetch-event -o "$out/starlingmonkey.wasm"
ls -l "$out/starlingmonkey.wasm"
