"""Numbers in ``/ftcost subscribe`` that are not sane (400 digits, past any bound): a
command error naming the number with an example, never an exception from float maths."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.price_commands import MAX_MIN_CHANGE_PCT, CommandError, parse_subscribe
from bot.price_service import PriceCommands, PriceContext, PriceReplyKind
from bot.prices import PriceBook
from bot.store_sqlite import SQLiteStore
from engine.specs import Catalog
from tests.fakes.clock import ManualClock

HUGE = "9" * 400
"""A number that is infinite as a float (``round(float(HUGE))`` overflows)."""


async def test_a_400_digit_memory_after_a_card_is_a_command_error_naming_it(
    catalog: Catalog,
) -> None:
    async with SQLiteStore(":memory:") as store:
        commands = PriceCommands(store, PriceBook(catalog),
                                 ManualClock(datetime(2026, 12, 1, tzinfo=UTC)))  # fmt: skip
        reply = await commands.handle(f"subscribe h100 {HUGE}",
                                      PriceContext("slack", "C1", "slack:T1", "U1"))  # fmt: skip
        assert await store.get_subscription("slack", "C1") is None

    assert reply is not None and reply.kind is PriceReplyKind.ERROR
    assert '"9999' in reply.text and "too large a number" in reply.text
    assert "Example: `subscribe" in reply.text and len(reply.text) < 300


@pytest.mark.parametrize("text", [f"{HUGE}%", HUGE, f"a100 {HUGE}", "h100 999999"])
def test_a_number_past_every_bound_is_a_command_error_with_an_example(
    catalog: Catalog, text: str
) -> None:
    with pytest.raises(CommandError, match="Example: `subscribe") as err:
        parse_subscribe(text, catalog)

    assert text.split()[-1][:4] in str(err.value) and len(str(err.value)) < 300


@pytest.mark.parametrize(
    ("text", "problem"),
    [("-5%", "is below zero"), ("-5", "is below zero"), ("1e309%", "is too large a number"),
     ("nan%", "is not a number"), ("inf", "is too large a number"),
     ("h100 -80", "is below zero")],
)  # fmt: skip
def test_a_signed_exponent_or_nan_number_is_a_number_error_with_the_range(
    catalog: Catalog, text: str, problem: str
) -> None:
    with pytest.raises(CommandError) as err:
        parse_subscribe(text, catalog)

    message = str(err.value)
    assert f'"{text.split()[-1]}" {problem}' in message and "not a card" not in message
    assert f"of 1% up to {MAX_MIN_CHANGE_PCT:g}%" in message


def test_a_minimum_change_over_the_limit_says_what_the_limit_is(catalog: Catalog) -> None:
    with pytest.raises(CommandError, match=f"up to {MAX_MIN_CHANGE_PCT:g}%"):
        parse_subscribe("2000%", catalog)


def test_a_long_unknown_card_is_cut_in_the_error(catalog: Catalog) -> None:
    with pytest.raises(CommandError) as err:
        parse_subscribe("x" * 5000, catalog)

    assert len(str(err.value)) < 300
