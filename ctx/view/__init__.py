"""The operator's view (``ctx view``): one self-contained HTML page to audit the context.

The git layer gathers what the page shows (``ctxgit/porcelain/viewdata.py``:
one walk of the commits from HEAD) into the plain records of ``data.py``;
the modules here turn them into HTML and nothing else: no git, no network.

* ``data``: the records (commits, versions, entries) and what is safe to show
  of a value (a value stored with ``--force`` only as a preview; every text
  scanned for credentials, each finding redacted);
* ``entries``: an entry's row and its versions, each with what it changed;
* ``words``: values compared word by word;
* ``markdown``: summaries rendered from Markdown, every character escaped;
* ``chart``: the writes per day as an inline SVG chart;
* ``assets``: the page's style and script;
* ``page``: the sections, and the page.
"""
