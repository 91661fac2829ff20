"""``python -m py_runtime.wpt``: the WPT runner, in ``py_runtime/devtools/wpt.py``."""

from .devtools.wpt import main

if __name__ == "__main__":
    raise SystemExit(main())
