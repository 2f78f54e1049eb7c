"""What each command does and prints, one module per area; the command table
(``ctx/cli/table*.py``) names the function. Each handler takes a ``Run`` and its
parameters by name, and returns an exit status (None for 0) or raises."""
