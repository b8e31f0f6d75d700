"""``/ftcost config:`` (issue 16): a training config attached to the slash command.

Thin on purpose: the attachment's size (as Discord reports it) is checked first, then its
bytes are read from Discord's CDN and handed to the neutral service
(:mod:`bot.config_questions`), which reads them with ``yaml.safe_load`` under a 64 KB cap
and executes or imports nothing. The ``query`` text and the structured options override
the config, as words after ``ftcost --config FILE`` do; where the text and an option
disagree, the answer says so as it does without a config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import discord

from adapters.discord.options import Options, option_fields
from adapters.trainconfig import FORMATS, MAX_CONFIG_BYTES, ConfigError, ConfigRead
from adapters.trainconfig.ask import builder
from bot.config_questions import answer_config, config_error, read_shared_config, too_large
from bot.service import Reply, RequestBuilder, Service
from engine import Request
from engine.specs import Catalog

EXAMPLE: Final = "/ftcost config: qlora.yml query: 20M tokens h100"
"""How a config is asked on Discord, for error messages."""


def config_builder(config: ConfigRead, options: Options) -> RequestBuilder:
    """The config's request builder with the structured ``options`` said beside the
    query text: both override the config (a model option replaces the config's model),
    and where the text and an option disagree the answer says so."""

    def build(words: str, previous: Request | None, catalog: Catalog) -> Request:
        said = option_fields(options, catalog)
        model = said.fields.get("model")
        words = f"{model} {words}".strip() if model else words
        return builder(config, EXAMPLE, said)(words, previous, catalog)

    return build


async def read_attachment(attachment: discord.Attachment) -> bytes:
    """The attachment's bytes; :class:`ConfigError` when Discord reports it over 64 KB
    (it is then not downloaded), when it is larger than reported, or when it cannot be
    fetched."""
    name = attachment.filename
    if attachment.size > MAX_CONFIG_BYTES:
        raise too_large(name, attachment.size)
    try:
        data = await attachment.read()
    except (discord.HTTPException, discord.ClientException, OSError) as exc:
        raise ConfigError(
            f"I couldn't download {name} from Discord ({type(exc).__name__}); attach it "
            f"again ({FORMATS})."
        ) from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise too_large(name, len(data))
    return data


async def answer_attachment(
    service: Service,
    attachment: discord.Attachment,
    text: str,
    options: Options,
    workspace: str | None,
    defaults: Mapping[str, object] | None,
) -> Reply:
    """The reply to ``/ftcost`` with a ``config`` attachment: the estimate (with the keys
    read and ignored), or an error that says what was wrong and which formats are read."""
    try:
        config = read_shared_config(await read_attachment(attachment), attachment.filename)
    except ConfigError as exc:
        return config_error(exc)
    words = " ".join(text.split())
    return await answer_config(
        service, config, words, workspace, defaults,
        build=config_builder(config, options), example=EXAMPLE,
    )


__all__ = ["EXAMPLE", "answer_attachment", "config_builder", "read_attachment"]
