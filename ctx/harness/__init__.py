"""What ctx knows of each agent harness, one module per harness (``claude_code``,
``codex``, ``gemini``, ``cursor``, ``agents_md``, ``launcher``); ``registry`` lists them,
``wiring`` makes ``ctx wire`` of them. Imports the core only, never the front door,
``ctxgit`` or ``hooks``. Adding a harness: one module here, its line in ``registry``, and
its golden files under tests/golden/."""
