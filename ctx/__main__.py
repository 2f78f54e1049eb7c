"""``python -m ctx`` runs the command line."""

from .fastcli import main

main()
