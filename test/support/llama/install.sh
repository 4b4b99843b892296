#!/usr/bin/env bash
# Installs the real OpenAI-compatible test server the LLM suites run: llama-cpp-python[server]
# (compiled from its PyPI source distribution with the machine's cmake and g++) and the gguf
# package that writes the test model, into a virtualenv under ${AIOPS_CACHE:-~/.cache/aiops}.
# Idempotent: a venv whose stamp names this version is kept (the build takes ~4 min on 2 cores).
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
# No native tuning (the cache may move between machines), no tests or examples: only the library.
CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
  "$venv/bin/pip" install --quiet --no-cache-dir "llama-cpp-python[server]==$version" "gguf==$gguf_version" >&2
echo "$version $gguf_version" >"$stamp"
echo "$venv/bin/python"
