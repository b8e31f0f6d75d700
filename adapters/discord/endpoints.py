"""Where discord.py talks to: Discord itself, or a stand-in at ``DISCORD_API_BASE_URL``.

discord.py builds every REST URL from one class attribute, ``discord.http.Route.BASE``,
and (since 2.4) opens its first gateway connection at another,
``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY``, without asking ``GET /gateway``
(only an ``AutoShardedClient`` without a shard count asks ``GET /gateway/bot``). Both are
plain, documented attributes; setting them is the whole of "pointing" discord.py.

For a stand-in the gateway is *discovered*: :func:`discover_gateway` asks the stand-in's
``GET /gateway`` (through discord.py's own HTTP client, after login) and points the
gateway at the URL it returns. For Discord's real API nothing is changed.
"""

from __future__ import annotations

import logging

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import HTTPClient, Route

DEFAULT_API_BASE_URL = "https://discord.com/api/v10"

log = logging.getLogger(__name__)


def normalize_base_url(base_url: str | None) -> str:
    """``https://host/api/v10`` without a trailing slash (the default when empty)."""
    url = (base_url or "").strip().rstrip("/")
    if not url:
        return DEFAULT_API_BASE_URL
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"DISCORD_API_BASE_URL must be an http(s) URL, not {url!r}")
    return url


def is_default(base_url: str | None) -> bool:
    return normalize_base_url(base_url) == DEFAULT_API_BASE_URL


def gateway_from_base(base_url: str) -> str:
    """``ws(s)://same-host/gateway``: a guess when a stand-in has no ``GET /gateway``."""
    url = yarl.URL(normalize_base_url(base_url))
    scheme = {"http": "ws", "https": "wss"}.get(url.scheme, url.scheme)
    return str(url.with_scheme(scheme).with_path("/gateway").with_query(None))


def point_discord_at(base_url: str | None, gateway_url: str | None = None) -> None:
    """Send discord.py's REST calls to ``base_url`` and, when given, its gateway
    connection to ``gateway_url`` (process-wide, as discord.py's attributes are)."""
    Route.BASE = normalize_base_url(base_url)
    if gateway_url is not None:
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


async def discover_gateway(http: HTTPClient, base_url: str | None) -> str | None:
    """For a stand-in API, ask its ``GET /gateway`` and point discord.py's gateway there;
    returns the URL (None, and nothing changed, for Discord's own API)."""
    if is_default(base_url):
        return None
    try:
        data = await http.request(Route("GET", "/gateway"))
        url = str(data["url"])
    except Exception as exc:  # a stand-in without the route: guess from the base URL
        url = gateway_from_base(normalize_base_url(base_url))
        log.warning("GET /gateway failed on %s (%r); using %s", base_url, exc, url)
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
    return url
