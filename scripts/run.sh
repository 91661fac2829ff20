#!/usr/bin/env bash
# Set up, build, then answer a prompt with the echo model in headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m py_runtime prompt "${1:-Hello from the Prompt API runtime!}" "${@:2}"
