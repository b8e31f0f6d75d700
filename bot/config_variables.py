"""Environment variables ftcost does not read, spelt like ones it does: a warning each
(``check-config`` prints them, ``run`` logs them at start-up), names only, never a value.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from bot.config_checks import nearest

VARIABLE_PREFIXES = ("FTCOST_", "SLACK_", "DISCORD_")
"""Variables with these prefixes are checked against the ones the bot reads."""
OWN_PREFIX = "FTCOST_"
"""No other program sets ``FTCOST_*``: an unknown one is always a mistake. Another tool's
``SLACK_*`` / ``DISCORD_*`` (``SLACK_WEBHOOK_URL``, ``DISCORD_CLIENT_ID``) is only warned
about when its name is within :data:`NEAR_VARIABLE` of one the bot reads and that one is
not set (``SLACK_BOT_TOKN``, ``DISCORD_BOT_TOKEN``)."""
NEAR_VARIABLE = 0.8
"""How alike (``difflib``'s ratio, 0 to 1) a name must be to a known one to be taken for
a misspelling of it: ``DISCORD_BOT_TOKEN`` and ``DISCORD_TOKEN`` are 0.87,
``SLACK_CLIENT_SECRET`` and ``SLACK_SIGNING_SECRET`` 0.77."""


def _meant_variable(name: str, known: Collection[str]) -> str | None:
    """The known variable ``name`` was probably meant to be: the same in upper case, the
    same without ``FTCOST_`` (``FTCOST_STORE_URL`` -> ``STORE_URL``), or one spelt alike."""
    upper = name.upper()
    bare = upper.removeprefix(OWN_PREFIX)
    for guess in (upper, bare):
        if guess != name and guess in known:
            return guess
    return nearest(upper, known, NEAR_VARIABLE)


def _unknown_variable(name: str, env: Mapping[str, str], known: Collection[str]) -> str | None:
    """The warning for ``name``, a prefixed variable the bot does not read, or None where
    it is probably another program's."""
    guess = _meant_variable(name, known)
    if name.upper().startswith(OWN_PREFIX):
        own = ", ".join(sorted(k for k in known if k.startswith(OWN_PREFIX)))
        hint = f"did you mean {guess}?" if guess else f"the ones it reads are {own}"
        return f"{name} is set but ftcost does not read it ({hint}): rename or unset it"
    if guess is None or env.get(guess, "").strip():
        return None
    return (f"{name} is set but ftcost does not read it (did you mean {guess}?): rename it, "
            "or ignore this if another program on this host reads it")  # fmt: skip


def unknown_variable_warnings(env: Mapping[str, str], known: Collection[str]) -> list[str]:
    """One warning per variable of ``env`` whose name starts with one of
    :data:`VARIABLE_PREFIXES` (in any case) and is not in ``known`` (the variables the bot
    reads), as :data:`OWN_PREFIX` says; names only, never a value."""
    out: list[str] = []
    for name in sorted(env):
        if name in known or not name.upper().startswith(VARIABLE_PREFIXES):
            continue
        warning = _unknown_variable(name, env, known)
        if warning is not None:
            out.append(warning)
    return out
