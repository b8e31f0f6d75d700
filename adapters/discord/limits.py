"""Discord's published limits that the renderer and the views respect by construction.

Sources (Discord developer docs, ``discord/discord-api-docs``):

* resources/message#embed-object-embed-limits: title 256, description 4096, 25 fields,
  field name 256, field value 1024, footer text 2048, author name 256, and 6000 characters
  in total across every embed of a message (leading/trailing whitespace not counted).
* resources/message#create-message: content 2000 characters, up to 10 embeds.
* interactions/message-components: 5 action rows, 5 buttons per row, one select alone in its
  row, custom_id 100 characters, button label 80, select options 25 with label/value/
  description 100 each, select placeholder 150.
* interactions/receiving-and-responding#interaction-response-object-autocomplete: 25
  choices; application-command option choice name 1-100, string value up to 100.
* resources/channel#start-thread-from-message: thread name 1-100 characters.
"""

from __future__ import annotations

from typing import Final

MAX_CONTENT: Final = 2000
MAX_EMBEDS: Final = 10
MAX_EMBED_TITLE: Final = 256
MAX_EMBED_DESCRIPTION: Final = 4096
MAX_EMBED_FIELDS: Final = 25
MAX_FIELD_NAME: Final = 256
MAX_FIELD_VALUE: Final = 1024
MAX_FOOTER: Final = 2048
MAX_EMBED_TOTAL: Final = 6000

MAX_CUSTOM_ID: Final = 100
MAX_BUTTON_LABEL: Final = 80
MAX_SELECT_OPTIONS: Final = 25
MAX_SELECT_OPTION_TEXT: Final = 100
MAX_SELECT_PLACEHOLDER: Final = 150

MAX_CHOICES: Final = 25
MAX_CHOICE_NAME: Final = 100
MAX_CHOICE_VALUE: Final = 100

MAX_THREAD_NAME: Final = 100
MAX_MODEL_OPTION: Final = 320
"""The ``model`` option's length: a Hub id with its revision and URL fits (96-character
repository, ``@``, a revision of up to 200, ``https://huggingface.co/``)."""
MAX_OPTION_STRING: Final = 500
"""The longest ``query`` option we declare (Discord allows string options up to 6,000
characters). The parser itself reads up to ``adapters.parse.MAX_QUERY_CHARS`` (2,000
characters), so a query typed in a message may be longer than one in this option."""

INTERACTION_WINDOW_S: Final = 3.0
"""An interaction must be acknowledged within three seconds of being created."""


def cut(text: str, limit: int, marker: str = "…") -> str:
    """``text`` shortened to ``limit`` characters, ending in ``marker`` when cut."""
    text = str(text)
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(marker))] + marker
