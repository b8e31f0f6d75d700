"""Per-channel defaults (``/ftcost set framework hf``): the commands, what they store,
and how the defaults meet the words a user types."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.parse import parse_query
from bot.channel_settings import (
    ChannelSettings,
    defaults_from,
    is_settings_command,
    with_defaults,
)
from bot.service import ReplyKind, Service
from bot.store_sqlite import SQLiteStore
from engine.choices import Framework


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(tmp_path / "s.sqlite3") as opened:
        yield opened


@pytest.mark.parametrize("text", ["set framework hf", "SET prices spot", "unset framework",
                                  "settings", "set", "settings?"])
def test_settings_commands_are_recognized(text: str) -> None:
    assert is_settings_command(text)


@pytest.mark.parametrize("text", ["8b lora", "settings of 8b", "", "prices", "seq 8k"])
def test_questions_are_not_settings_commands(text: str) -> None:
    assert not is_settings_command(text)


def test_a_default_fills_only_what_the_user_did_not_say() -> None:
    asked = parse_query("8b lora")

    assert with_defaults(asked, {"framework": Framework.HF}).framework is Framework.HF
    assert with_defaults(asked, {}).framework is Framework.GENERIC


def test_the_words_a_user_types_win_over_the_channel_default() -> None:
    said = parse_query("8b lora").model_validate({"model": "llama-3.1-8b",
                                                  "framework": "torchtune"})

    assert with_defaults(said, {"framework": Framework.HF}).framework is Framework.TORCHTUNE


def test_stored_values_this_version_does_not_know_are_ignored() -> None:
    assert defaults_from({"framework": "hf", "colour": "blue"}) == {"framework": Framework.HF}
    assert defaults_from({"framework": "jax-someday"}) == {}


async def test_set_then_show_then_unset(store: SQLiteStore) -> None:
    settings = ChannelSettings(store)

    done = await settings.handle("set framework hf", "slack", "C1")
    shown = await settings.handle("settings", "slack", "C1")
    assert done is not None and done.ok and "framework setting is now hf" in done.text
    assert shown is not None and "framework: hf" in shown.text
    assert await settings.defaults("slack", "C1") == {"framework": Framework.HF}

    back = await settings.handle("unset framework", "slack", "C1")
    assert back is not None and back.ok and "generic" in back.text
    assert await settings.defaults("slack", "C1") == {}


async def test_settings_are_per_channel(store: SQLiteStore) -> None:
    settings = ChannelSettings(store)
    await settings.handle("set framework unsloth", "slack", "C1")

    assert await settings.defaults("slack", "C2") == {}
    assert await settings.defaults("discord", "C1") == {}


@pytest.mark.parametrize(
    ("text", "says"),
    [("set colour blue", 'I can\'t set "colour"'), ("set framework jax", '"jax" is not a'),
     ("set framework", "Set framework to what?"), ("set", "name one setting of `framework`"),
     ("unset", "I can't unset nothing"), ("reset colour extra", 'I can\'t reset "colour')],
)
async def test_a_bad_settings_command_says_what_is_wrong_and_how_to_say_it(
    store: SQLiteStore, text: str, says: str
) -> None:
    answer = await ChannelSettings(store).handle(text, "slack", "C1")

    assert answer is not None and not answer.ok
    assert says in answer.text
    assert "`hf`" in answer.text or "framework hf`" in answer.text  # how to say it right
    assert await store.channel_settings("slack", "C1") == {}


async def test_a_bad_value_names_the_setting_and_a_value_to_say(store: SQLiteStore) -> None:
    answer = await ChannelSettings(store).handle("set prices nan", "slack", "C1")

    assert answer is not None and not answer.ok
    assert '"nan" is not a value of the prices setting' in answer.text
    assert "`/ftcost set prices spot`" in answer.text


async def test_the_service_applies_a_channels_defaults_to_new_questions_only(
    store: SQLiteStore,
) -> None:
    service = Service(store)
    defaults = {"framework": Framework.HF}

    fresh = service.answer("8b lora 10M tokens", None, None, defaults)
    typed = service.answer("8b lora 10M tokens", None, None, {})
    assert fresh.kind is ReplyKind.ESTIMATE and fresh.request is not None
    assert fresh.request.framework is Framework.HF
    assert typed.request is not None and typed.request.framework is Framework.GENERIC
    followup = service.answer("seq 8k", typed.request, None, defaults)
    assert followup.request is not None and followup.request.framework is Framework.GENERIC


async def test_a_spot_price_default_is_stored_by_name_and_read_back_as_the_field(
    store: SQLiteStore,
) -> None:
    settings = ChannelSettings(store)

    await settings.handle("set prices spot", "discord", "C1")

    assert await store.channel_settings("discord", "C1") == {"prices": "spot"}
    assert await settings.defaults("discord", "C1") == {"spot": True}


async def test_settings_with_words_after_it_says_how_to_ask(store: SQLiteStore) -> None:
    answer = await ChannelSettings(store).handle("settings for this channel", "slack", "C1")

    assert answer is not None and not answer.ok
    assert "`settings` takes no words after it" in answer.text
    assert "`/ftcost settings`" in answer.text and "terminal" not in answer.text


@pytest.mark.parametrize(("text", "words"), [("set bs 8", "bs 8"), ("set seq to 8k", "seq 8k"),
                                             ("set method qlora", "qlora")])
async def test_set_with_question_words_says_to_reply_with_them_alone(
    store: SQLiteStore, text: str, words: str
) -> None:
    answer = await ChannelSettings(store).handle(text, "slack", "C1")

    assert answer is not None and not answer.ok
    assert "belongs in a question" in answer.text
    assert f"reply in its thread with the words alone (`{words}`)" in answer.text
    assert await store.channel_settings("slack", "C1") == {}


async def test_unset_with_a_value_says_it_takes_only_the_name(store: SQLiteStore) -> None:
    settings = ChannelSettings(store)
    await settings.handle("set framework hf", "slack", "C1")

    answer = await settings.handle("unset framework hf", "slack", "C1")

    assert answer is not None and not answer.ok
    assert "`/ftcost unset framework`" in answer.text
    assert await store.channel_settings("slack", "C1") == {"framework": "hf"}


async def test_a_value_said_with_a_space_reads_as_its_hyphenated_name(
    store: SQLiteStore,
) -> None:
    answer = await ChannelSettings(store).handle("set prices on demand", "slack", "C1")

    assert answer is not None and answer.ok
    assert await store.channel_settings("slack", "C1") == {"prices": "on-demand"}
