#!/usr/bin/env bash
# Set up, build, then run the linters and every test (unit and browser).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m ruff check .
python3 -m pytest -q "$@"
