"""Git's files read and written as plain files: no pygit2, no processes.

The floor every fast path may import (``ctx start``, a write's commit, auto-sync's
trigger, ``ctx status``): where things are (``layout``), the author identity
(``identity``), loose objects (``objects``), refs (``refs``), the
one upstream rule (``config``), commit trailers (``trailers``).
"""
