"""What each command does and prints, one module per area; the command table
(``ctx/cli/table*.py``) names the function (``"entries:get"``). Each handler takes a
``Run`` and its parameters by name, and returns an exit status (None for 0) or raises.

A module here loads when a command of its area runs (``run.handler_of`` imports it
then), so a start pays for no handler it does not run.
"""
