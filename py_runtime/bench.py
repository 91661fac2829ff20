"""``python -m py_runtime.bench``: the benchmarks, in ``py_runtime/devtools/bench/``."""

from .devtools.bench import main

if __name__ == "__main__":
    raise SystemExit(main())
