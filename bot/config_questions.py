"""Training configs asked of the shared service (issue 16), for every front end.

The config's reader and request builder are neutral (:mod:`adapters.trainconfig`); this
runs them through :class:`bot.service.Service` and adds the config's lines to the reply.
A chat front end only fetches the config's bytes (a Slack file, a Discord attachment, a
code block) and calls :func:`answer_shared_config`; every problem with the config comes
back as an error reply that says what was wrong and which formats are read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from adapters.trainconfig import (
    FORMATS,
    ConfigError,
    ConfigRead,
    config_notes,
    read_config,
)
from adapters.trainconfig.ask import CONFIG_EXAMPLE, builder

# A front end that refuses a config before or while downloading it (a Slack file, a Discord
# attachment) raises the reader's own error, so an upload and ``--config`` read alike:
# "big.yml is 97 KB; ..." / "... is larger than 64 KB; ftcost reads configs up to 64 KB".
from adapters.trainconfig.load import too_large as too_large
from bot.replies import Reply, ReplyKind
from bot.service import RequestBuilder, Service

CONFIG_TITLE = "Training config"

BINARY_SNIFF_BYTES = 8192
"""Bytes looked at for a NUL byte, the mark of a binary file (as ``git`` and ``file`` do)."""


def with_config(reply: Reply, config: ConfigRead) -> Reply:
    """An estimate reply with the config's lines (keys read, ignored, approximations)
    first among its notes; other replies unchanged."""
    if reply.kind is not ReplyKind.ESTIMATE or reply.report is None:
        return reply
    counted = reply.request is not None and reply.request.dataset_tokens is not None
    report = dataclasses.replace(
        reply.report, notes=[*config_notes(config, counted), *reply.report.notes]
    )
    return dataclasses.replace(reply, report=report)


async def answer_config(
    service: Service,
    config: ConfigRead,
    words: str = "",
    workspace: str | None = None,
    defaults: Mapping[str, object] | None = None,
    build: RequestBuilder | None = None,
    example: str = CONFIG_EXAMPLE,
) -> Reply:
    """The service's answer to ``config`` with the user's ``words`` on top. ``build``
    replaces the config's own request builder (:func:`adapters.trainconfig.ask.builder`),
    e.g. one that also applies a front end's structured options; ``example`` is how the
    front end asks with a config, for error messages."""
    reply = await service.answer_async(
        words, None, workspace, defaults, build=build or builder(config, example)
    )
    return with_config(reply, config)


def read_shared_config(data: bytes | str, name: str) -> ConfigRead:
    """Read a config someone shared (a file, an attachment, a code block).

    Raises :class:`ConfigError` for a binary file (a NUL byte in its first 8 KB) and for
    everything :func:`adapters.trainconfig.read_config` refuses (over 64 KB, not UTF-8,
    not YAML/JSON, none of the formats). Nothing in it is executed or imported."""
    if isinstance(data, bytes) and b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise ConfigError(f"{name} is a binary file, not text; ftcost reads {FORMATS}.")
    return read_config(data, name)


def config_error(exc: ConfigError) -> Reply:
    """The error reply (shown to the asker only) for a config that cannot be read."""
    return Reply(ReplyKind.ERROR, text=str(exc), title=CONFIG_TITLE)


async def answer_shared_config(
    service: Service,
    data: bytes | str,
    name: str,
    words: str = "",
    workspace: str | None = None,
    defaults: Mapping[str, object] | None = None,
    example: str = CONFIG_EXAMPLE,
) -> Reply:
    """Read the shared config ``data`` (called ``name`` in messages) and answer it with
    ``words`` on top; an error reply when it cannot be read."""
    try:
        config = read_shared_config(data, name)
    except ConfigError as exc:
        return config_error(exc)
    return await answer_config(service, config, words, workspace, defaults, example=example)
