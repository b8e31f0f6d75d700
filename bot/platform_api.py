"""What a chat platform's runner is to the bot process, apart from the process itself.

:mod:`bot.runtime` starts and stops runners; the Slack and Discord runners
(``adapters/*/runner.py``) implement :class:`PlatformRunner` and raise
:class:`PlatformStartError`. Both sides import this module and neither imports the other
at file level, so there is no import cycle between the runtime and the platforms.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from aiohttp import web


class PlatformStartError(Exception):
    """A platform could not start; the message is for the operator (no secrets)."""


@runtime_checkable
class PlatformRunner(Protocol):
    """What :class:`bot.runtime.Runtime` needs from a chat platform."""

    name: str

    def routes(self) -> list[web.RouteDef]:
        """aiohttp routes served on ``port`` (empty when the platform needs none)."""
        ...

    async def start(self) -> None:
        """Connect; raise :class:`PlatformStartError` with an operator-facing message."""
        ...

    async def stop(self, timeout: float = 10.0) -> None:
        """Disconnect and wait (up to ``timeout``) for replies in flight."""
        ...

    async def health(self) -> dict[str, Any]:
        """At least ``{"ok": bool}``."""
        ...


__all__ = ["PlatformRunner", "PlatformStartError"]
