"""The price commands' words, apart from their answers (:mod:`bot.price_service`, which
pulls in the live price sources): the conversation and the platforms tell a price
command from a question with them alone."""

from __future__ import annotations

from typing import Final

PRICE_WORDS: Final = frozenset({"prices", "price", "subscribe", "unsubscribe"})


def price_command(text: str) -> tuple[str, str] | None:
    """``("subscribe", "10% h100")`` for a price command, else None."""
    word, _, rest = " ".join(text.split()).partition(" ")
    word = word.lower().rstrip("?!.")
    if word not in PRICE_WORDS:
        return None
    return ("prices" if word == "price" else word), rest
