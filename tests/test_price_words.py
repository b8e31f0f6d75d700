"""Which texts are price commands (:func:`bot.price_words.price_command`) and which are a
question's ``price N`` left to the parser."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bot.price_words import price_command

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text", ["prices", "prices?", "Price", "price!", "price list",
                                  "prices please", "price?"])  # fmt: skip
def test_price_or_prices_alone_or_with_plain_words_is_the_prices_command(text: str) -> None:
    parsed = price_command(text)
    assert parsed is not None and parsed[0] == "prices"


@pytest.mark.parametrize("text", ["price 3", "price $2/hr", "price 2.49 70b qlora h100",
                                  "price 3 on h100", "Price .5", "price three", "price -3",
                                  "price? 3"])  # fmt: skip
def test_price_followed_by_a_number_is_a_questions_price_not_a_command(text: str) -> None:
    assert price_command(text) is None


def test_prices_with_cards_keeps_the_cards_as_its_arguments() -> None:
    assert price_command("prices h100 a100") == ("prices", "h100 a100")


def test_prices_followed_by_a_number_stays_the_command_the_parser_does_not_read() -> None:
    assert price_command("prices 4090") == ("prices", "4090")


def test_subscribe_and_unsubscribe_keep_what_follows_them() -> None:
    assert price_command("Subscribe 10% h100") == ("subscribe", "10% h100")
    assert price_command("unsubscribe h100") == ("unsubscribe", "h100")


def test_a_question_is_no_price_command() -> None:
    assert price_command("70b qlora h100 price 2.49") is None


def test_the_price_words_import_nothing_heavy() -> None:
    tree = ast.parse((ROOT / "bot" / "price_words.py").read_text(encoding="utf-8"))
    imported = {
        name.split(".")[0]
        for node in ast.walk(tree)
        for name in (
            [a.name for a in node.names] if isinstance(node, ast.Import)
            else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        )
    }  # fmt: skip
    assert imported <= {"__future__", "re", "typing"}
