"""The outbound proxy the environment names, as every client of ftcost's that makes its
own HTTP session reads it: the price sources, the Hub and Discord (Slack's SDK reads
``HTTPS_PROXY`` itself).

``HTTPS_PROXY`` (``HTTP_PROXY`` for an ``http://`` URL; either case) unless ``NO_PROXY``
lists the host: the choice aiohttp's ``trust_env`` sessions make, read here per URL so a
client can use it without ``trust_env`` (which would also add ``~/.netrc`` credentials).
"""

from __future__ import annotations

from typing import Final

import aiohttp
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

PROXY_ERRORS: Final = (aiohttp.ClientHttpProxyError, aiohttp.ClientProxyConnectionError)
"""A proxy the environment names that could not be reached, or refused the tunnel."""


def env_proxy(url: str) -> tuple[URL | None, aiohttp.BasicAuth | None]:
    """The proxy (and the credentials in its URL) the environment names for ``url``;
    ``(None, None)`` for none."""
    try:
        return get_env_proxy_for_url(URL(url))
    except (LookupError, ValueError):
        return None, None
