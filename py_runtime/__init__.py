"""Prompt API runtime: the spec engine behind the web's ``LanguageModel``.

``engine/`` holds the spec's algorithms and the worker protocol, ``models/`` the
model adapters, ``tokenizer/`` and ``tool_calls/`` what causal LMs need, and
``hosts/`` the two places it runs: Pyodide inside the page's worker
(``hosts/pyodide.py``) and CPython for tests and tools. ``devtools/`` is never
shipped to a page.
"""

__version__ = "0.1.0"
