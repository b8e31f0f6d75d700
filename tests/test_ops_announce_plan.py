"""The plan a price announcement reports keeps to what the channel asked about: the card
its last question named (else the cards its subscription watches), at spot rates when
that question said ``spot``. A channel watching H100s whose H100 price fell hears about
an H100 plan, not "cheapest plan now $47.51 on 3x rtx-5090, was $47.51"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adapters.parse import parse_query
from bot.announce import Announcement, plan_announcement
from bot.price_store import Subscription
from catalog.price_snapshot import CardPrices, CloudQuotes, PriceSnapshot, Quote, snapshot_id
from engine import Request
from engine.specs import Catalog

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
T1 = T0 + timedelta(days=1)
H100 = "h100-sxm"
OLD = {H100: (3.00, 1.60)}
"""Card -> (on-demand, spot) $/GPU-hour before the refresh."""
NEW = {H100: (2.49, 1.30)}
"""After it: the H100 17% cheaper on demand."""


def snapshot(at: datetime, prices: dict[str, tuple[float, float]]) -> PriceSnapshot:
    cards = {
        card: CardPrices(card=card, clouds={"aws": CloudQuotes(
            on_demand=Quote(price=on_demand, cloud="aws", region="us-east-1"),
            spot=Quote(price=spot, cloud="aws", region="us-east-1"), as_of=at)})
        for card, (on_demand, spot) in prices.items()
    }  # fmt: skip
    return PriceSnapshot(id=snapshot_id(at), taken_at=at, cards=cards)


def sub(*cards: str) -> Subscription:
    return Subscription("slack", "C1", "slack:T1", 5.0, tuple(cards))


def last(query: str, catalog: Catalog) -> Request:
    """The channel's last question."""
    return parse_query(query, catalog)


def announce(s: Subscription, catalog: Catalog, request: Request | None) -> Announcement:
    ann = plan_announcement(s, snapshot(T0, OLD), snapshot(T1, NEW), catalog,
                            last_request=request)  # fmt: skip
    assert ann is not None and ann.reference is not None
    return ann


def test_the_plan_keeps_to_the_card_the_channels_last_question_named(catalog: Catalog) -> None:
    ann = announce(sub(), catalog, last("70b qlora 50M tokens h100", catalog))

    assert ann.reference is not None and ann.reference.now is not None
    assert ann.reference.now.cards.endswith(f"x {H100}")


def test_the_plan_shows_the_named_cards_price_fall(catalog: Catalog) -> None:
    ann = announce(sub(), catalog, last("70b qlora 50M tokens h100", catalog))

    now, was = ann.reference.now, ann.reference.was  # type: ignore[union-attr]
    assert now is not None and was is not None and now.cost_usd < was.cost_usd


def test_the_plan_keeps_to_the_subscriptions_cards_when_no_question_named_one(
    catalog: Catalog,
) -> None:
    ann = announce(sub(H100), catalog, None)

    assert ann.reference is not None and ann.reference.now is not None
    assert ann.reference.now.cards.endswith(f"x {H100}")


def test_the_card_the_question_named_wins_over_the_subscriptions(catalog: Catalog) -> None:
    ann = announce(sub(H100, "a100-80gb-sxm"), catalog, last("70b qlora 50M tokens h100",
                                                             catalog))

    assert ann.reference is not None and ann.reference.cards == (H100,)


def test_the_plan_is_priced_at_spot_when_the_question_said_spot(catalog: Catalog) -> None:
    on_demand = announce(sub(), catalog, last("70b qlora 50M tokens h100", catalog))
    spot = announce(sub(), catalog, last("70b qlora 50M tokens h100 spot", catalog))

    assert spot.reference is not None and on_demand.reference is not None
    assert spot.reference.now is not None and on_demand.reference.now is not None
    assert spot.reference.now.cost_usd < on_demand.reference.now.cost_usd


def test_the_reference_line_names_the_card_and_spot(catalog: Catalog) -> None:
    ann = announce(sub(), catalog, last("70b qlora 50M tokens h100 spot", catalog))

    assert "(Llama 3.1 70B · QLoRA, 50M tokens, on h100-sxm, spot): cheapest plan now" in \
        ann.text()


def test_without_a_card_named_or_watched_the_plan_may_use_any_card(catalog: Catalog) -> None:
    ann = announce(sub(), catalog, last("70b qlora 50M tokens", catalog))

    assert ann.reference is not None and ann.reference.cards == ()
    assert ", on " not in ann.reference.label
