"""Prompt API runtime: the spec engine behind the web's ``LanguageModel``.

The engine is host-agnostic: it runs in Pyodide inside a Worker (see
``worker.py``) and under CPython for the unit tests.
"""

__version__ = "0.1.0"
