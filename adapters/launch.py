"""The ``ftcost`` command's entry point: :func:`adapters.cli.main`, imported inside a guard.

Loading the terminal front end takes a few hundred milliseconds (pydantic, the engine,
the catalog). Ctrl-C in that time exits with status 130 and no traceback, as it does once
the command runs (:func:`adapters.cli.main` catches it there).
"""

from __future__ import annotations

INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C (128 + SIGINT), as the shell reports it."""


def main() -> int:
    """Run ``ftcost`` with the process's arguments; its exit status."""
    try:
        from adapters.cli import main as run
    except KeyboardInterrupt:
        return INTERRUPTED
    return run()
