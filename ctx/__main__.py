"""``python -m ctx`` runs the command line."""

from ctx.cli import main

main()
