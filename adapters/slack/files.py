"""Training configs in Slack (issue 16): a file or snippet shared with a mention or in an
estimate's thread, or a config pasted in a code block (```...```) after ``/ftcost``.

Thin on purpose: find the config (a code block in the text, else a shared file), fetch
its bytes, and hand them to the neutral service (:mod:`bot.config_questions`), which
reads them with ``yaml.safe_load`` under a 64 KB cap and executes or imports nothing.
The rest of the message (the words around the code block, the file's comment) overrides
the config, as words after ``ftcost --config FILE`` do.

A shared file is downloaded from its ``url_private_download`` with the bot token
(``files:read``), over the Web API client's own aiohttp session, and never sent to a
host other than Slack's file host or the API's own. The size Slack reports is checked
before the download, the ``Content-Length`` before the body, and the body is read in
chunks that stop past 64 KB, so a large or lying file is refused without being read.
When an event carries only a file's id (``file_access: check_file_info``), the file is
looked up with ``files.info``.

Where files arrive in the Events API: a message with files has subtype ``file_share``
(``message.channels`` / ``message.groups``, with its ``thread_ts`` and text), and an
``app_mention`` carries the mention message's ``files``. The separate ``file_shared``
event has neither thread nor text, so it is acknowledged and not answered.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import slack_to_plain
from adapters.trainconfig import FORMATS, MAX_CONFIG_BYTES, ConfigError
from bot.config_questions import answer_shared_config, config_error, too_large
from bot.service import Reply, Service

log = logging.getLogger("ftcost.slack")

SLACK_FILES_HOST: Final = "files.slack.com"
"""Where ``url_private_download`` points on slack.com; the bot token goes nowhere else
(besides the host of ``SLACK_API_BASE_URL``, for a stand-in)."""
CHUNK_BYTES: Final = 16 * 1024
CONFIG_SUFFIXES: Final = (".yml", ".yaml", ".json", ".txt", ".cfg", ".conf")
CONFIG_FILETYPES: Final = frozenset({"yaml", "yml", "json", "text", "javascript"})
"""Slack's ``filetype`` ids of files (and snippets) that may hold a config."""
CONFIG_MIMETYPES: Final = frozenset(
    {"application/json", "application/yaml", "application/x-yaml"}
)
EXAMPLE: Final = "/ftcost ```base_model: meta-llama/Llama-3.1-8B ...``` 20M tokens h100"
"""How a config is asked in Slack, for error messages."""
PASTED_NAME: Final = "the pasted config"

_CODE_BLOCK = re.compile(r"```(?:[A-Za-z+-]*[ \t]*\r?\n)?(?P<body>.*?)```", re.DOTALL)
_LINK = re.compile(r"<([^<>|]+)(?:\|([^<>]*))?>")


@dataclass(frozen=True, slots=True)
class ConfigAsk:
    """A config question's reply and how the question reads in the estimate's context
    line (``qlora.yml + seq 8k``)."""

    reply: Reply
    query: str


def split_code_block(text: str) -> tuple[str | None, str]:
    """``(code block body, the other words)`` of Slack-encoded ``text``; ``(None, text)``
    without a code block. The body keeps its lines (YAML needs them), with Slack's
    ``&lt;``/``&gt;``/``&amp;`` and ``<url|label>`` wrapping undone.

    Raises :class:`ConfigError` for more than one code block."""
    blocks = list(_CODE_BLOCK.finditer(text))
    if not blocks:
        return None, text
    if len(blocks) > 1:
        raise ConfigError(
            f"That message has {len(blocks)} code blocks; paste one config ({FORMATS})."
        )
    block = blocks[0]
    body = _LINK.sub(lambda m: m.group(2) or m.group(1), block.group("body"))
    body = body.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return body, text[: block.start()] + " " + text[block.end() :]


def looks_like_config(file: Mapping[str, Any]) -> bool:
    """A shared file that may hold a config: by name, Slack's ``filetype`` or MIME type."""
    name = str(file.get("name") or "").lower()
    mimetype = str(file.get("mimetype") or "").lower()
    return (
        name.endswith(CONFIG_SUFFIXES)
        or str(file.get("filetype") or "").lower() in CONFIG_FILETYPES
        or mimetype.startswith("text/")
        or mimetype in CONFIG_MIMETYPES
    )


def pick_file(files: Sequence[Mapping[str, Any]], *, explicit: bool) -> Mapping[str, Any] | None:
    """The file to read among ``files``: the one that looks like a config. ``explicit``
    (a mention): else the first file, so that a wrong file gets an error; in a thread
    files that are no config (a screenshot) are left alone.

    Raises :class:`ConfigError` for more than one config-like file."""
    configs = [f for f in files if looks_like_config(f)]
    if len(configs) > 1:
        names = ", ".join(str(f.get("name") or f.get("id")) for f in configs[:4])
        raise ConfigError(f"{len(configs)} configs were shared ({names}); share one at a time.")
    if configs:
        return configs[0]
    return files[0] if files and explicit else None


class SlackConfigs:
    """Answers config questions with the bot's Web API client and the shared service."""

    def __init__(self, client: AsyncWebClient, service: Service) -> None:
        self.client = client
        self.service = service

    async def answer(
        self,
        text: str,
        files: Sequence[Mapping[str, Any]] | None,
        *,
        bot_user_id: str | None,
        workspace: str | None,
        defaults: Callable[[], Awaitable[Mapping[str, object] | None]],
        explicit: bool = True,
    ) -> ConfigAsk | None:
        """The reply to a config in ``text`` (Slack-encoded: a code block) or in ``files``
        (an event's file objects), the other words on top; None when there is none.
        ``defaults()``: the channel's settings. Every problem is an error reply (the
        asker sees it privately)."""
        try:
            body, rest = split_code_block(text)
            file = None if body is not None else pick_file(list(files or []), explicit=explicit)
        except ConfigError as exc:
            return ConfigAsk(config_error(exc), slack_to_plain(text, bot_user_id))
        if body is None and file is None:
            return None
        words = slack_to_plain(rest, bot_user_id)
        name = PASTED_NAME
        try:
            if file is not None:
                file = await self._details(file)
                name = str(file.get("name") or file.get("title") or "the shared file")
                data: bytes | str = await self.download(file, name)
            else:
                data = body or ""
        except ConfigError as exc:
            return ConfigAsk(config_error(exc), " ".join(p for p in (name, words) if p))
        reply = await answer_shared_config(
            self.service, data, name, words, workspace, await defaults(), example=EXAMPLE
        )
        label = "config (code block)" if file is None else name
        return ConfigAsk(reply, " + ".join(p for p in (label, words) if p))

    async def _details(self, file: Mapping[str, Any]) -> Mapping[str, Any]:
        """``file`` with its download URL: asked with ``files.info`` when the event carries
        only the id (``file_access: check_file_info``)."""
        if file.get("url_private_download") or file.get("url_private"):
            return file
        try:
            info = await self.client.files_info(file=str(file.get("id") or ""))
        except (SlackApiError, SlackClientError) as exc:
            response = getattr(exc, "response", None)
            error = response.get("error") if response is not None else type(exc).__name__
            log.warning("files.info failed: %s", error)
            raise ConfigError(_cannot_read(str(error))) from exc
        found = info.get("file")
        if not isinstance(found, dict):
            raise ConfigError(_cannot_read("no file"))
        return found

    def _allowed(self, url: str) -> bool:
        host = urlsplit(url).hostname or ""
        api = urlsplit(self.client.base_url).hostname or ""
        return host in {SLACK_FILES_HOST, api}

    async def download(self, file: Mapping[str, Any], name: str) -> bytes:
        """The file's bytes, at most :data:`MAX_CONFIG_BYTES`; :class:`ConfigError` for a
        larger file (by its reported size, its ``Content-Length`` or its body) and for a
        download that fails."""
        size = file.get("size")
        if isinstance(size, int) and size > MAX_CONFIG_BYTES:
            raise too_large(name, size)
        if file.get("mode") == "external" or file.get("is_external"):
            raise ConfigError(
                f"{name} is stored outside Slack; upload the file itself ({FORMATS})."
            )
        url = str(file.get("url_private_download") or file.get("url_private") or "")
        if not url or not self._allowed(url):
            raise ConfigError(_cannot_read("not a Slack file URL"))
        session = self.client.session
        own = session is None
        if session is None:
            session = aiohttp.ClientSession()
        try:
            return await self._get(session, url, name)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("file download failed: %s", type(exc).__name__)
            raise ConfigError(_cannot_read(type(exc).__name__)) from exc
        finally:
            if own:
                await session.close()

    async def _get(self, session: aiohttp.ClientSession, url: str, name: str) -> bytes:
        headers = {"Authorization": f"Bearer {self.client.token or ''}"}
        timeout = aiohttp.ClientTimeout(total=self.client.timeout)
        async with session.get(
            url, headers=headers, timeout=timeout,
            ssl=self.client.ssl if self.client.ssl is not None else True,
            proxy=self.client.proxy,
        ) as resp:
            if resp.status != 200:
                raise ConfigError(_cannot_read(f"HTTP {resp.status}"))
            if resp.content_type == "text/html":  # Slack's sign-in page: no files:read
                raise ConfigError(
                    f"I couldn't download {name}: this Slack app may not read files. An admin "
                    "can reinstall it from the current manifest (it asks for files:read), or "
                    f"paste the config in a code block: {EXAMPLE}"
                )
            if resp.content_length is not None and resp.content_length > MAX_CONFIG_BYTES:
                raise too_large(name, resp.content_length)
            data = bytearray()
            async for chunk in resp.content.iter_chunked(CHUNK_BYTES):
                data += chunk
                if len(data) > MAX_CONFIG_BYTES:
                    raise too_large(name)
            return bytes(data)


def _cannot_read(why: str) -> str:
    return (
        f"I couldn't download the shared file ({why}). Share it again, or paste the config "
        f"in a code block: {EXAMPLE}"
    )


__all__ = ["ConfigAsk", "SlackConfigs", "looks_like_config", "pick_file", "split_code_block"]
