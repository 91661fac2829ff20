"""``python -m py_runtime prompt|serve``: the command line, in ``py_runtime/devtools/cli.py``."""

from .devtools.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
