"""Where a causal LM's forward passes run: ONNX Runtime Web in the page, or
``onnxruntime`` under CPython. The generation loop is the same for both."""
