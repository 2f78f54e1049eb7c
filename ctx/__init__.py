"""ctx: one shared memory for an operator and their AI agents (ctx specification 1.0)."""

__version__ = "0.1.0"
SPEC_VERSION = "1.0"
