"""The shared reply rendered as Discord embeds and components, within Discord's limits."""

from __future__ import annotations

import dataclasses

import discord
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.discord.embeds import (
    BAND_COLOURS,
    ERROR_COLOUR,
    band_colour,
    code_block,
    embeds_for,
    error_embed,
    estimate_embed,
    notice_embed,
    text_embed,
)
from adapters.discord.views import estimate_view, gpu_options
from adapters.report import NO_FIT, Table
from bot.service import Reply, ReplyKind, Service
from catalog.loader import default_catalog
from engine.fit import FIT_OVERSIZED, FIT_ROOMY, FIT_SWEET, FIT_TIGHT, FIT_TOO_SMALL
from tests.fakes.discord_server import validate_message

CATALOG = default_catalog()


def message_size(embeds: list[discord.Embed]) -> int:
    """Characters Discord counts toward a message's 6,000 across its embeds: title,
    description, footer, author and fields' names and values, whitespace-trimmed."""
    texts = [t for e in embeds for t in (e.title, e.description, e.footer.text, e.author.name,
                                          *(p for f in e.fields for p in (f.name, f.value)))]
    return sum(len((t or "").strip()) for t in texts)
QUERIES = [
    "70b qlora 50M tokens h100",
    "8b",
    "llama-3.1-405b full 1T tokens 100 epochs seq 128k bs 64 no-ckpt no-flash 8x t4",
    "deepseek-v3 full 50M tokens",
    "8b qlora 20M tokens l40s napkin",
    "70b full 50M tokens 2x rtx-4090",
    "llama-3.1-405b qlora trl a10 zero1 bs 64 seq 32k 5M tokens",  # hf's longest facts
]


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(workers=0)


def payload(embeds: list[discord.Embed], view: discord.ui.View | None = None) -> dict:
    out: dict = {"embeds": [e.to_dict() for e in embeds]}
    if view is not None:
        out["components"] = view.to_components()
    return out


def everything(embed: discord.Embed) -> str:
    return "\n".join([embed.title or "", embed.description or "",
                      *(f"{f.name}\n{f.value}" for f in embed.fields), embed.footer.text or ""])


@pytest.mark.parametrize("query", QUERIES)
def test_estimates_fit_discords_limits(service: Service, query: str) -> None:
    reply = service.answer(query)
    assert reply.kind is ReplyKind.ESTIMATE and reply.report is not None
    embeds = embeds_for(reply, footer="tester: /ftcost " + query)
    view, _ = estimate_view(reply.report)
    assert validate_message(payload(embeds, view)) == []
    [embed] = embeds
    text = everything(embed)
    report = reply.report
    assert embed.title == report.title
    assert report.headline in text.replace("\\", "")
    assert report.bar(32) in text
    assert report.cards.render().splitlines()[1] in text
    assert report.what_if.render().splitlines()[1] in text
    for warning in report.warnings:
        assert warning[:40] in text.replace("\\", "")
    if report.price_line:
        assert report.price_line in text.replace("\\", "")
    assert embed.colour is not None and embed.colour.value == band_colour(report.band)
    assert "Some sections were cut" not in text


def test_colour_by_fit_band() -> None:
    assert BAND_COLOURS[FIT_SWEET] == 0x2ECC71
    assert BAND_COLOURS[FIT_ROOMY] == 0x3498DB
    assert BAND_COLOURS[FIT_OVERSIZED] == 0x95A5A6
    assert BAND_COLOURS[FIT_TIGHT] == 0xF1C40F  # it runs: not the red of "does not fit"
    assert BAND_COLOURS[FIT_TOO_SMALL] == BAND_COLOURS[NO_FIT] == 0xE74C3C
    assert band_colour("unheard of") == BAND_COLOURS[NO_FIT]


def test_a_followup_says_what_changed(service: Service) -> None:
    first = service.answer("8b lora 20M tokens")
    second = service.answer("what if 8k seq and qlora", first.request)
    embed = estimate_embed(second.report, second.changes)
    assert embed.description is not None
    assert embed.description.startswith("**What if:** method LoRA → QLoRA, seq 2,048 → 8,192")


def _huge(report, n: int = 60, width: int = 900):
    rows = [[f"{i}x card-{i}" * 3, "1.0", "50%", "sweet spot", "nvlink", "$1.00", "1 h", "$1"]
            for i in range(n)]
    return dataclasses.replace(
        report,
        title="T" * 400,
        subtitle="s" * 1500,
        headline="h" * 1500,
        cost_line="c" * 1500,
        price_line="p" * 1500,
        notes=["n" * 500] * 5,
        cards=Table(report.cards.columns, rows, report.cards.align),
        what_if=Table(report.what_if.columns,
                      [[f"what if {i}", "1.0", "1x h100", "1", "$1"] for i in range(n)],
                      report.what_if.align),
        warnings=[f"warning {i} " + "w" * width for i in range(n)],
        assumptions=[f"assumption {i} " + "a" * width for i in range(n)],
        top_gpus=[(f"gpu-{i}", f"{i}x GPU " + "g" * 200) for i in range(n)],
    )


def test_the_largest_report_is_cut_to_fit(service: Service) -> None:
    report = _huge(service.answer("70b qlora 50M tokens h100").report)
    embed = estimate_embed(report, ["x " * 800], footer="f" * 3000)
    view, _ = estimate_view(report)
    assert validate_message(payload([embed], view)) == []
    assert message_size([embed]) <= 6000
    assert len(embed.fields) <= 25
    names = [f.name for f in embed.fields]
    assert names[0] == "Memory per GPU" and "Cards" in names  # the essentials survive
    cards = next(f.value for f in embed.fields if f.name == "Cards")
    assert "more cards" in cards and len(cards) <= 1024
    assert embed.footer.text is not None and "cut to fit" in embed.footer.text
    assert len(gpu_options(report)) == 25


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 40), st.integers(0, 2000), st.integers(0, 40), st.text(max_size=300),
)
def test_any_size_of_report_fits(n: int, width: int, notes: int, footer: str) -> None:
    report = Service(workers=0).answer("8b qlora 20M tokens").report
    big = dataclasses.replace(_huge(report, n, width), notes=["note " * 20] * notes)
    embed = estimate_embed(big, footer=footer or None)
    assert validate_message(payload([embed])) == []


def test_code_block_drops_whole_rows_with_a_count() -> None:
    block = code_block([f"row {i:03d} " + "x" * 40 for i in range(100)], limit=500)
    assert len(block) <= 500 and block.startswith("```\n") and block.endswith("```")
    assert block.splitlines()[-1].startswith("… ") and "more" in block
    assert code_block(["a", "b"]) == "```\na\nb```"
    assert "```" not in code_block(["evil ``` fence"])[3:-3]


@pytest.mark.parametrize("kind", ["help", "models", "gpus"])
def test_help_and_listings(service: Service, kind: str) -> None:
    reply = service.answer(kind)
    embeds = embeds_for(reply)
    assert validate_message(payload(embeds)) == []
    text = everything(embeds[0])
    for line in reply.text.strip().splitlines():
        assert line in text  # nothing lost: the shipped listings fit
    if kind == "help":
        assert any(f.name == "On Discord" for f in embeds[0].fields)


def test_a_listing_longer_than_a_message_ends_in_a_count() -> None:
    text = "\n".join(f"model-{i:04d}  {'x' * 60}" for i in range(400))
    embed = text_embed("Models", text)
    assert validate_message(payload([embed])) == []
    assert message_size([embed]) <= 6000
    last = (embed.fields[-1].value if embed.fields else embed.description) or ""
    assert "more lines" in last


def test_errors_name_the_word_and_escape_what_the_user_typed(service: Service) -> None:
    reply = service.answer("70b qlora h1000")
    embed = error_embed(reply, query="70b qlora h1000 @everyone **bold** [x](https://e.vil)")
    assert embed.colour is not None and embed.colour.value == ERROR_COLOUR
    assert "h1000" in (embed.description or "")
    fields = {f.name: f.value for f in embed.fields}
    assert "`h100`" in fields["Did you mean"]
    asked = fields["You asked"]
    assert "@\u200beveryone" in asked and "\\*\\*bold\\*\\*" in asked and "\\[x\\]" in asked
    assert validate_message(payload([embed])) == []
    odd = Reply(ReplyKind.ERROR, text="x" * 5000, suggestions=["s" * 300] * 3)
    assert validate_message(payload([error_embed(odd, "q" * 3000)])) == []


MENTIONS = ["<@123>", "<@!123>", "<@&1>", "<#1>", "@everyone", "@here",
            "<@123456789012345678>", "</ftcost:1>"]


@pytest.mark.parametrize("mention", MENTIONS)
def test_any_mention_the_user_typed_is_inert_in_you_asked_and_in_the_error(mention: str) -> None:
    reply = Reply(ReplyKind.ERROR, text=f'I don\'t know "{mention}".', word=mention)

    embed = error_embed(reply, query=f"8b qlora {mention}")

    asked = {f.name: f.value for f in embed.fields}["You asked"] or ""
    assert mention not in asked and mention not in (embed.description or "")
    assert mention.lstrip("<@!&#/").rstrip(">") in asked  # still readable, just inert


@pytest.mark.parametrize("mention", MENTIONS)
def test_notices_carrying_remote_text_make_mentions_inert(mention: str) -> None:
    embed = notice_embed(f"I couldn't draw the chart: org/{mention} is gated")

    assert mention not in (embed.description or "")
