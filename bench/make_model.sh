#!/usr/bin/env bash
# Make the 0.5B-size benchmark model (see bench/make_model.py) in its own venv.
set -euo pipefail
out="${1:-$HOME/.cache/prompt-api-bench/qwen2.5-0.5b-random}"
venv="$HOME/.cache/prompt-api-bench/venv"
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "torch==2.13.0" "transformers==4.57.6" "optimum==2.1.0" \
    "optimum-onnx==0.1.0" accelerate "onnx==1.23.2" "onnxruntime==1.32.0" onnx-ir sympy
fi
"$venv/bin/python" -c "import onnx_ir" 2>/dev/null || "$venv/bin/pip" install -q onnx-ir
"$venv/bin/python" "$here/make_model.py" "$out"
