#!/usr/bin/env bash
# Installs the real OpenAI-compatible test server the LLM suites run: llama-cpp-python[server]
# (compiled from its PyPI source distribution with the machine's cmake and g++) and the gguf
# package that writes the test model, into a virtualenv under ${AIOPS_CACHE:-~/.cache/aiops}.
# Idempotent: a venv whose stamp names this version is kept (the build takes minutes on 2 cores).
# Prints the venv's python on the last line.
set -euo pipefail
version=0.3.36
gguf_version=0.17.1
cache=${AIOPS_CACHE:-$HOME/.cache/aiops}
venv=$cache/llama-cpp-python-$version
stamp=$venv/.aiops-installed
if [[ -f $stamp ]] && [[ $(cat "$stamp") == "$version $gguf_version" ]]; then
  echo "$venv/bin/python"
  exit 0
fi
mkdir -p "$cache"
rm -rf "$venv"
python3 -m venv "$venv"
# Only what the server runs on the tests' tiny F32 model, compiled for the build time rather than
# the speed of inference: no native tuning (the cache may move between machines), no tests or
# examples, no multimodal library (llava/mtmd, which the server loads only for a vision chat
# handler), no llamafile sgemm or quantised-weight repacking (F32 weights use neither), and -O1
# instead of -O3 (a third less compile time; the model answers in milliseconds either way).
CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAVA_BUILD=OFF \
-DGGML_LLAMAFILE=OFF -DGGML_CPU_REPACK=OFF \
-DCMAKE_C_FLAGS_RELEASE='-O1 -DNDEBUG' -DCMAKE_CXX_FLAGS_RELEASE='-O1 -DNDEBUG'" \
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  "$venv/bin/pip" install --quiet --no-cache-dir "llama-cpp-python[server]==$version" "gguf==$gguf_version" >&2
echo "$version $gguf_version" >"$stamp"
echo "$venv/bin/python"
