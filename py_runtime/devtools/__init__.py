"""Developer tools: everything that drives the product from outside a page.

- ``wpt`` and ``wpt_host``: the WPT runner (``python -m py_runtime.wpt``) and how it
  serves test files, with ``wpt_resources/`` (testharness report, test_driver, the AI
  tests' util.js and their media);
- ``bench``: the benchmarks (``python -m py_runtime.bench``), with ``pages/``;
- ``cli``: ``python -m py_runtime prompt`` and ``serve``;
- ``server``, ``browser``, ``memory``: the static server, Chromium's launch flags
  and the pages' peak memory, for all of the above and for the browser tests;
- ``protocol_js``: writes web/src/protocol.js from the engine's protocol definitions.

None of it is shipped: pages never load it and the wheel leaves it out.
"""
