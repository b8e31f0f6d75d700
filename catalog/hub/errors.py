"""The one exception the Hub resolver raises, worded for the person who typed the query.

Every :class:`HubError` message names what is wrong and what to do about it; the bots
and the terminal show ``str(error)`` as it is. ``kind`` says which case it is, and
whether the answer may be remembered for a while (:attr:`HubError.cacheable`): a model
that does not exist or whose family ftcost cannot read will not change in the next ten
minutes, a timeout or a Hub outage might be over in seconds.
"""

from __future__ import annotations

from enum import StrEnum

from catalog.echo import ECHO_CHARS as ECHO_CHARS
from catalog.echo import shown as shown


class HubErrorKind(StrEnum):
    BAD_REF = "bad-ref"
    """The ``org/name@revision`` text itself is malformed (no request made)."""
    NOT_FOUND = "not-found"
    """No such repository (or a private one the token cannot see)."""
    REVISION_NOT_FOUND = "revision-not-found"
    NO_CONFIG = "no-config"
    """The repository exists but has no ``config.json`` at that revision."""
    GATED = "gated"
    """A gated repository: a token of an account that accepted its licence is needed."""
    AUTH = "auth"
    """401/403 without the Hub saying why: no token, or a token it refused."""
    UNSUPPORTED = "unsupported"
    """``model_type`` is a family the engine cannot model yet."""
    MISSING_FIELDS = "missing-fields"
    MALFORMED = "malformed"
    """``config.json`` is not JSON, not an object, or a field has the wrong type."""
    TOO_LARGE = "too-large"
    """A size beyond any real model's (:mod:`catalog.hub.bounds`): refused before use."""
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    """The Hub could not be reached or answered 429/5xx."""
    OFFLINE = "offline"
    """``HF_HUB_OFFLINE`` is set: no request made (the setting may change: never cached)."""


_CACHEABLE = frozenset(
    {
        HubErrorKind.NOT_FOUND,
        HubErrorKind.REVISION_NOT_FOUND,
        HubErrorKind.NO_CONFIG,
        HubErrorKind.UNSUPPORTED,
        HubErrorKind.MISSING_FIELDS,
        HubErrorKind.MALFORMED,
        HubErrorKind.TOO_LARGE,
    }
)


class HubError(Exception):
    """A Hub model could not be resolved; ``str(err)`` is the user-facing message."""

    def __init__(self, kind: HubErrorKind, message: str, ref: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.ref = ref
        """The ``org/name[@rev]`` the error is about (the word to point at)."""

    def __str__(self) -> str:
        return self.message

    @property
    def cacheable(self) -> bool:
        """True for answers that describe the repository itself (not found, unsupported
        family, a broken config): safe to remember briefly. Never for timeouts, outages
        or authentication problems."""
        return self.kind in _CACHEABLE
