"""Running the Discord client inside ``python -m bot``, and ``sync-commands``.

:class:`DiscordRunner` is a platform runner (see :mod:`bot.runtime`): ``start`` points
discord.py at the configured API (``DISCORD_API_BASE_URL``, default Discord's), logs in
over HTTP (a bad ``DISCORD_TOKEN`` fails here, with a message for the operator), then
connects to the gateway in the background and waits briefly for READY so that a refused
privileged intent is reported at start rather than in a log later. ``stop`` stops
answering, lets replies in flight finish, and closes the connection.

Commands are registered only by :func:`sync_commands` (``python -m bot sync-commands
[--guild ID]``): one bulk overwrite per run, never on start, so restarts cost no
application-command rate limit. ``--guild`` registers them in one server, where they
appear at once (useful while trying the bot); without it they are global. A server id
that is not a positive snowflake is refused before anything is sent; an unreachable API
ends it with the same one line as ``run`` (exit 1), never a traceback.

With ``HTTPS_PROXY`` (or ``HTTP_PROXY`` for an ``http://`` API) set and the API's host
not in ``NO_PROXY``, the client's REST calls and gateway websocket go through that proxy
(:func:`proxy_options`).

:meth:`DiscordRunner.health` is ``ok`` only while the gateway websocket is open and READY.

The bot has no voice: discord.py's start-up warnings that the voice libraries (PyNaCl,
davey) are missing are switched off (:func:`quiet_voice_warnings`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import sys
from typing import Any, TextIO

import aiohttp
import discord

from adapters.discord.client import ClientSettings, FtcostClient, ShardedFtcostClient, create_client
from adapters.discord.endpoints import DEFAULT_API_BASE_URL, point_discord_at
from bot.platform_api import PlatformStartError
from bot.service import Service
from catalog.proxy import PROXY_ERRORS, env_proxy

log = logging.getLogger("ftcost.discord")

READY_TIMEOUT_S = 30.0
MAX_SNOWFLAKE = 2**64 - 1
"""Discord ids are unsigned 64-bit integers."""


def quiet_voice_warnings() -> None:
    """Switch off discord.py's two warnings at a client's creation, ``PyNaCl is not
    installed`` and ``davey is not installed``: they are about voice, which this bot never
    uses. (``VoiceClient.warn_nacl`` / ``warn_dave`` are discord.py's own warn-once flags.)"""
    discord.VoiceClient.warn_nacl = False
    discord.VoiceClient.warn_dave = False


def unreachable_message(api_base_url: str, exc: BaseException) -> str:
    """The one line for a Discord API that cannot be reached (DNS, refused connection,
    timeout, a proxy that refused): what failed and what to check."""
    if isinstance(exc, PROXY_ERRORS):
        return (
            f"cannot reach the Discord API at {api_base_url} through the proxy "
            f"({type(exc).__name__}): check HTTPS_PROXY (the proxy must allow CONNECT to "
            "discord.com and gateway.discord.gg on port 443), or list the host in NO_PROXY"
        )
    return (
        f"cannot reach the Discord API at {api_base_url} ({type(exc).__name__}): check "
        "this host's network and DNS (it must reach discord.com over HTTPS) and "
        "DISCORD_API_BASE_URL if it is set"
    )


def guild_id(text: str) -> int:
    """``--guild``'s value: a server id, a positive snowflake (a whole number of up to 20
    digits). Anything else is refused by argparse with this message (exit 2)."""
    value = text.strip()
    if value.isascii() and value.isdigit() and 0 < int(value) <= MAX_SNOWFLAKE:
        return int(value)
    raise argparse.ArgumentTypeError(
        f"{text!r} is not a Discord server id: use the positive number Discord shows (User "
        "Settings > Advanced > Developer Mode on, then right-click the server > Copy Server "
        "ID), e.g. --guild 123456789012345678"
    )


def settings_from_config(config: Any) -> ClientSettings:
    """The client settings from the bot's configuration (its ``discord:`` section)."""
    section = getattr(config, "discord", None)
    if section is None:  # a configuration without a ``discord:`` section
        base = os.environ.get("DISCORD_API_BASE_URL", "").strip()
        return ClientSettings(api_base_url=base or DEFAULT_API_BASE_URL)
    shard_ids = getattr(section, "shard_ids", None)
    return ClientSettings(
        message_content=bool(getattr(section, "message_content", False)),
        shard_count=getattr(section, "shard_count", None),
        shard_ids=tuple(shard_ids) if shard_ids else None,
        api_base_url=str(getattr(section, "api_base_url", None) or DEFAULT_API_BASE_URL),
        thread_auto_archive_minutes=getattr(section, "thread_auto_archive_minutes", 1440),
    )


def proxy_options(api_base_url: str) -> dict[str, Any]:
    """``proxy`` and ``proxy_auth`` for discord.py's client when the environment names a
    proxy for the Discord API (``HTTPS_PROXY`` / ``https_proxy`` for an ``https://`` API,
    ``HTTP_PROXY`` for ``http://``; credentials in its URL become ``proxy_auth``) and
    ``NO_PROXY`` does not list the API's host: the choice aiohttp's ``trust_env``
    sessions (price sources, the Hub) make. discord.py sends both its REST calls and its
    gateway websocket through it. Empty without a proxy."""
    proxy, auth = env_proxy(api_base_url)
    if proxy is None:
        return {}
    log.info("discord through the proxy %s", proxy)
    return {"proxy": str(proxy), "proxy_auth": auth}


def _token(config: Any) -> str:
    secret = getattr(getattr(config, "secrets", None), "discord_token", None)
    if secret is None or not secret.get_secret_value():
        raise PlatformStartError("DISCORD_TOKEN is not set (Developer Portal > Bot > Token).")
    return str(secret.get_secret_value())


class DiscordRunner:
    """A platform runner for Discord."""

    name = "discord"

    def __init__(
        self,
        config: Any,
        service: Service,
        *,
        settings: ClientSettings | None = None,
        token: str | None = None,
        **client_kwargs: Any,
    ) -> None:
        self.settings = settings or settings_from_config(config)
        self.token = token if token is not None else _token(config)
        self.service = service
        self._client_kwargs = client_kwargs
        self.client: FtcostClient | ShardedFtcostClient | None = None
        self._task: asyncio.Task[None] | None = None

    def routes(self) -> list[Any]:
        return []

    async def start(self, ready_timeout: float = READY_TIMEOUT_S) -> None:
        point_discord_at(self.settings.api_base_url)
        quiet_voice_warnings()
        options = {**proxy_options(self.settings.api_base_url), **self._client_kwargs}
        client = create_client(self.service, self.settings, **options)
        self.client = client
        try:
            await client.login(self.token)
        except discord.LoginFailure:
            await client.close()
            raise PlatformStartError(
                "Discord rejected DISCORD_TOKEN: copy the token again from the Developer "
                "Portal (Bot > Reset Token)."
            ) from None
        except discord.HTTPException as exc:
            await client.close()
            raise PlatformStartError(
                f"the Discord API at {self.settings.api_base_url} answered HTTP {exc.status} "
                "to the login: check DISCORD_API_BASE_URL if it is set; otherwise Discord "
                "may be having an outage (discordstatus.com): start again in a few minutes"
            ) from None
        except (aiohttp.ClientError, OSError) as exc:
            await client.close()
            raise PlatformStartError(unreachable_message(self.settings.api_base_url, exc)) from None
        self._task = asyncio.get_running_loop().create_task(client.connect(reconnect=True))
        ready = asyncio.ensure_future(client.wait_until_ready())
        done, _ = await asyncio.wait(
            {self._task, ready}, timeout=ready_timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if self._task in done:
            ready.cancel()
            error = self._task.exception()
            await client.close()
            if isinstance(error, discord.PrivilegedIntentsRequired):
                raise PlatformStartError(
                    "Discord refused the Message Content intent: switch it on in the "
                    "Developer Portal (Bot > Privileged Gateway Intents) or set "
                    "discord.message_content: false."
                ) from None
            reason = type(error).__name__ if error is not None else "closed"
            raise PlatformStartError(
                f"the Discord gateway connection ended at start: {reason}"
            ) from None
        if ready not in done:
            ready.cancel()
            log.warning("discord not ready after %.0fs; still connecting", ready_timeout)
        me = client.user
        log.info(
            "discord started user=%s application=%s shards=%s message_content=%s",
            me.id if me else None,
            client.application_id,
            client.shard_count or 1,
            self.settings.message_content,
        )

    async def stop(self, timeout: float = 10.0) -> None:
        client = self.client
        if client is None:
            return
        try:
            await client.drain(timeout)
        except TimeoutError:
            log.warning("discord stopped with %d replies in flight", client.inflight)
        await client.close()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, timeout)
            self._task = None

    async def health(self) -> dict[str, Any]:
        """``ok`` only while the gateway is connected and READY (as Slack's Socket Mode
        check answers only while its socket is open): discord.py keeps ``is_ready()`` true
        through a disconnect and its reconnect attempts, so the open websocket decides
        (:func:`gateway_connected`). A latency not measured yet (``inf``, ``nan``) is
        ``null``, keeping the body strict JSON."""
        client = self.client
        if client is None:
            return {"ok": False}
        ready = client.is_ready() and not client.is_closed()
        connected = ready and gateway_connected(client)
        return {
            "ok": connected,
            "ready": ready,
            "connected": connected,
            "latency_ms": latency_ms(client.latency),
            "guilds": len(client.guilds),
            "shards": client.shard_count or 1,
            "inflight": client.inflight,
        }


def gateway_connected(client: discord.Client) -> bool:
    """Whether every gateway websocket of ``client`` is open: its one connection
    (``Client.ws``), or each shard of an ``AutoShardedClient`` (``ShardInfo.is_closed``).
    While discord.py waits to reconnect, the websocket it lost stays in place, closed."""
    if isinstance(client, discord.AutoShardedClient):
        shards = client.shards.values()
        return bool(shards) and not any(shard.is_closed() for shard in shards)
    ws = client.ws
    return ws is not None and bool(ws.open)


def latency_ms(latency: float) -> float | None:
    """discord.py's heartbeat latency (seconds) in milliseconds, or None where there is
    none (``nan`` before a connection, ``inf`` before the first heartbeat is answered)."""
    return round(latency * 1000, 1) if math.isfinite(latency) else None


# ------------------------------------------------------------------------------------------
# sync-commands


async def sync_commands(
    token: str,
    settings: ClientSettings | None = None,
    guild_id: int | None = None,
    service: Service | None = None,
) -> list[str]:
    """Register ``/ftcost`` and ``/ftcost-help`` (globally, or in one guild) with one
    bulk overwrite; returns the registered names. Needs no gateway connection."""
    settings = settings or ClientSettings()
    point_discord_at(settings.api_base_url)
    quiet_voice_warnings()
    client = FtcostClient(service or Service(workers=0), settings,
                          **proxy_options(settings.api_base_url))
    async with client:
        await client.login(token)
        if guild_id is not None:
            guild = discord.Object(guild_id)
            client.tree.copy_global_to(guild=guild)
            synced = await client.tree.sync(guild=guild)
        else:
            synced = await client.tree.sync()
    return [command.name for command in synced]


def add_sync_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--guild", type=guild_id, metavar="ID", default=None,
        help="register in this server only (appears at once); default: globally",
    )


def run_sync_commands(args: argparse.Namespace, config: Any, out: TextIO) -> int:
    """``python -m bot sync-commands [--guild ID]``; exit 0, 1 (Discord refused), 2 (no
    token)."""
    try:
        token = _token(config)
    except PlatformStartError as exc:
        print(f"ftcost-bot: {exc}", file=sys.stderr)
        return 2
    guild = getattr(args, "guild", None)
    settings = settings_from_config(config)
    try:
        names = asyncio.run(sync_commands(token, settings, guild))
    except discord.LoginFailure:
        print("ftcost-bot: Discord rejected DISCORD_TOKEN: copy the token again from the "
              "Developer Portal (Bot > Reset Token).", file=sys.stderr)  # fmt: skip
        return 1
    except discord.HTTPException as exc:
        print(f"ftcost-bot: Discord refused the commands: {exc.status} {exc.text}",
              file=sys.stderr)
        return 1
    except (aiohttp.ClientError, OSError) as exc:
        print(f"ftcost-bot: {unreachable_message(settings.api_base_url, exc)}", file=sys.stderr)
        return 1
    where = f"in guild {guild}" if guild is not None else "globally"
    print(f"registered {', '.join('/' + n for n in names)} {where}", file=out)
    return 0
