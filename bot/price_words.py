"""The price commands' words, apart from their answers (:mod:`bot.price_service`, which
pulls in the live price sources): the conversation and the platforms tell a price
command from a question with them alone.

``price N`` is also a phrase of a question (``70b qlora h100 price 2.49``, and in a thread
``price 3``, ``price $2/hr``): ``price`` followed by a number is left to the parser. The
check is the first word's shape only, so this module imports nothing heavy."""

from __future__ import annotations

import re
from typing import Final

PRICE_WORDS: Final = frozenset({"prices", "price", "subscribe", "unsubscribe"})
_NUMBER_START: Final = re.compile(r"^[~≈]?[-+]?(?:[$€£]|\.?\d)")
"""A word that starts like a number or an amount: ``3``, ``2.49``, ``.5``, ``$2/hr``,
``-3``, ``~3``."""
_NUMBER_WORDS: Final = frozenset(
    {
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "single",
    }
)
"""The number words the query parser reads as digits (``price three`` is ``price 3``)."""


def reads_as_number(word: str) -> bool:
    """Whether ``word`` reads as the number of ``price N`` (``3``, ``$2/hr``, ``three``)."""
    return bool(_NUMBER_START.match(word)) or word.lower() in _NUMBER_WORDS


CHANGES: Final = frozenset({"subscribe", "unsubscribe"})
"""The price commands that change the channel's announcements."""


def price_command(text: str) -> tuple[str, str] | None:
    """``("subscribe", "10% h100")`` for a price command, else None. ``price`` followed by
    a number (``price 3``, ``price $2/hr on h100``) is a question's price, not the
    ``prices`` command; ``prices`` (which the parser does not read) always is one.

    Backticks are word breaks, as in a query (``subscribe `h100```, pasted as code). A
    change asked as a question (``subscribe?``, ``unsubscribe?``, ``subscribe 10% h100?``)
    changes nothing: it is the ``prices`` command, whose reply shows the channel's
    announcements and how ``subscribe`` / ``unsubscribe`` change them."""
    words = " ".join(str(text).replace("`", " ").split())
    first, _, rest = words.partition(" ")
    word = first.lower().rstrip("?!.")
    if word not in PRICE_WORDS:
        return None
    if word == "price" and reads_as_number(rest.partition(" ")[0]):
        return None
    asked = "?" in first or "?" in words.rstrip(" !.")[-1:]  # `subscribe?!`, `... h100?`
    if word in CHANGES and asked:
        return "prices", ""
    return ("prices" if word == "price" else word), rest.rstrip(" !.")
