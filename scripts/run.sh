#!/usr/bin/env bash
# Set up what the main job needs, build, then answer a prompt with SmolLM2 in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --main
python3 -m py_runtime prompt "${1:-Hello from the Prompt API runtime!}" "${@:2}"
