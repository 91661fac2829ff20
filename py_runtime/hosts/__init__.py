"""Where the engine runs: Pyodide in the page's worker, or CPython (tests, tools)."""
