"""``python -m ctx`` runs the command line, as the ``ctx`` executable does."""

from ctx.cli import console

console()
