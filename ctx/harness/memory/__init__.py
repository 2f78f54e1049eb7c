"""What each harness's own memory holds, read for ``ctx import --from HARNESS``: one module
per harness owning its memory's layout and format (``claude``, ``codex``, ``gemini``,
``cursor``); ``files``, the bounded reads of untrusted files they share; ``sources``, the
one place that picks a reader. Each reader hands the core
(``ctx/features/harness_import.py``) plain ``Memory`` records."""
