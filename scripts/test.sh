#!/usr/bin/env bash
# Set up, build, then run the checks (ruff, mypy, ESLint, tsc) and every test (unit and browser).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy
npx --no-install eslint .
npx --no-install tsc -p .
python3 -m pytest -q "$@"
