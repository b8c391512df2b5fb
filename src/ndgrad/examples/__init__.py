"""Runnable examples: `python -m ndgrad.examples.digits` (needs the `examples` extra)."""
