"""Training configs asked of the shared service (issue 16), for every front end.

The config's reader and request builder are neutral (:mod:`adapters.trainconfig`); this
runs them through :class:`bot.service.Service` and adds the config's lines to the reply.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from adapters.trainconfig import ConfigRead, config_notes
from adapters.trainconfig.ask import builder
from bot.replies import Reply, ReplyKind
from bot.service import Service


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
) -> Reply:
    """The service's answer to ``config`` with the user's ``words`` on top."""
    reply = await service.answer_async(
        words, None, workspace, defaults, build=builder(config)
    )
    return with_config(reply, config)
