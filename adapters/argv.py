"""Taking one ``--name VALUE`` / ``--name=VALUE`` option out of a command line.

The terminal's options (``--chart``, ``--config``, ``--framework``) each take one value
and leave the rest of the words to the query language; this is the one place that
splits them out. Each caller checks the value and words its own errors.
"""

from __future__ import annotations


class MissingValue(ValueError):
    """The option was given without a value (last word, followed by another option, or
    blank: ``--name=``, ``--name ""``)."""


def take_option(args: list[str], name: str) -> tuple[list[str], list[str]]:
    """``args`` without every ``name VALUE`` and ``name=VALUE``, and the values in order.

    Raises :class:`MissingValue` for ``name`` at the end, followed by ``--...``, or with
    a blank value (``name=`` and ``name ""`` say no more than ``name`` alone)."""
    rest: list[str] = []
    values: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == name:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise MissingValue(name)
            values.append(args[i + 1])
            i += 2
        elif arg.startswith(name + "="):
            values.append(arg.split("=", 1)[1])
            i += 1
        else:
            rest.append(arg)
            i += 1
        if values and not values[-1].strip():
            raise MissingValue(name)
    return rest, values
