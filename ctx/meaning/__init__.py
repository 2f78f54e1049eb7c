"""Search by meaning: the model behind one small interface (``model``), the entry's
text it reads and its vectors in the read index (``vectors``), and the ranking that
fuses meaning with words (``rank``). Everything here is loaded only by
``ctx search --semantic`` (and the MCP server's ``search`` with ``semantic``): numpy
and the model never reach the read or write paths.
"""
