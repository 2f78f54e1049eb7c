"""``python -m ctx`` runs the command line."""

from .cli import main

main()
