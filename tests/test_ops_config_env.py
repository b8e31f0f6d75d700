"""Configuration mistakes that used to pass silently: an ``events_path`` that breaks
routing, a misspelt or empty variable, an in-memory store, ``PORT=3000.0``; and messages
that wrote numbers or the Discord variable wrongly."""

from __future__ import annotations

import io
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

import bot.__main__ as entry
from bot.__main__ import main
from bot.config import Config, ConfigError
from bot.config_load import KNOWN_ENV, load_config

BOT_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SIGNING = "0123456789abcdef0123456789abcdef"
HTTP = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING}


def refusal(tmp_path: Path, settings: dict[str, Any] | None = None,
            env: dict[str, str] | None = None) -> str:  # fmt: skip
    """The message :func:`load_config` refuses ``settings`` (YAML) and ``env`` with."""
    path = None
    if settings is not None:
        path = tmp_path / "bot.yml"
        path.write_text(json.dumps(settings))
    with pytest.raises(ConfigError) as info:
        load_config(path, env or {})
    return str(info.value)


def warnings_for(env: dict[str, str]) -> list[str]:
    return load_config(None, env).warnings()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No ``FTCOST_*`` / ``SLACK_*`` / ``DISCORD_*`` variable of the developer's, the
    store in ``tmp_path``, Slack in HTTP mode."""
    for name in list(os.environ):
        if name.upper().startswith(("FTCOST_", "SLACK_", "DISCORD_")) or name in KNOWN_ENV:
            monkeypatch.delenv(name)
    monkeypatch.setenv("STORE_URL", str(tmp_path / "s.sqlite3"))
    for name, value in HTTP.items():
        monkeypatch.setenv(name, value)
    return monkeypatch


# -- slack.events_path -----------------------------------------------------------------------
@pytest.mark.parametrize(("path", "said"), [
    ("/slack/events?x=1", "contains '?' (a query: Slack posts to the path alone)"),
    ("/slack/{id}", "contains braces (the bot's router reads {...} as a variable part)"),
    ("/slack/events#top", "contains '#' (a fragment: never sent to the bot)"),
    ("#", "does not start with '/'"),
    ("slack/events", "does not start with '/'"),
])  # fmt: skip
def test_an_events_path_that_breaks_routing_is_refused_with_an_example(
    tmp_path: Path, path: str, said: str
) -> None:
    message = refusal(tmp_path, {"slack": {"events_path": path}})

    assert f"slack.events_path: {path!r} {said}: write a path such as /slack/events" in message


def test_a_plain_events_path_is_accepted() -> None:
    config = load_config(None, {})

    assert config.slack.events_path == "/slack/events"


# -- variables the bot does not read -----------------------------------------------------------
def test_a_misspelt_ftcost_variable_warns_with_the_name_meant() -> None:
    warnings = warnings_for({"FTCOST_LOGLEVEL": "DEBUG"})

    assert warnings == ["FTCOST_LOGLEVEL is set but ftcost does not read it (did you mean "
                        "FTCOST_LOG_LEVEL?): rename or unset it"]  # fmt: skip


def test_an_ftcost_prefix_on_a_known_variable_suggests_the_variable() -> None:
    [warning] = warnings_for({"FTCOST_STORE_URL": "redis://r:6379/0"})

    assert "(did you mean STORE_URL?)" in warning


def test_an_unknown_ftcost_variable_lists_the_ones_the_bot_reads() -> None:
    [warning] = warnings_for({"FTCOST_COLOUR": "1"})

    assert "FTCOST_COLOUR is set but ftcost does not read it (the ones it reads are " \
        "FTCOST_CONFIG, FTCOST_FRAMEWORK" in warning  # fmt: skip


def test_discord_bot_token_warns_that_the_bot_reads_discord_token() -> None:
    [warning] = warnings_for({"DISCORD_BOT_TOKEN": "secret-value-never-shown"})

    assert warning.startswith("DISCORD_BOT_TOKEN is set but ftcost does not read it (did you "
                              "mean DISCORD_TOKEN?)")  # fmt: skip
    assert "secret-value-never-shown" not in warning


def test_a_lower_case_variable_warns_with_its_upper_case_name() -> None:
    [warning] = warnings_for({"slack_bot_token": "x"})

    assert "(did you mean SLACK_BOT_TOKEN?)" in warning


@pytest.mark.parametrize("name", ["SLACK_WEBHOOK_URL", "SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET",
                                  "DISCORD_CLIENT_ID", "DISCORD_PUBLIC_KEY",
                                  "DISCORD_WEBHOOK_URL"])  # fmt: skip
def test_other_programs_slack_and_discord_variables_do_not_warn(name: str) -> None:
    assert warnings_for({name: "x"}) == []


def test_a_near_name_does_not_warn_when_the_variable_it_resembles_is_set() -> None:
    assert warnings_for({"SLACK_TOKEN": "x", **HTTP}) == []


def test_check_config_prints_the_misspelt_variable_warning(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FTCOST_RATELIMIT", "5")
    out = io.StringIO()

    assert main(["check-config"], out=out) == 0
    assert "  warning: FTCOST_RATELIMIT is set but ftcost does not read it (did you mean " \
        "FTCOST_RATE_LIMIT?)" in out.getvalue()  # fmt: skip


def test_run_logs_the_misspelt_variable_warning_at_start_up(
    clean_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Stub:
        """The runtime, not started: only what ``run`` logs before it is wanted."""

        def __init__(self, config: Config) -> None:
            pass

        async def run_until_stopped(self) -> None:
            return None

    clean_env.setattr(entry, "Runtime", Stub)
    clean_env.setenv("FTCOST_LOGLEVEL", "DEBUG")
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        with caplog.at_level(logging.INFO, logger="ftcost.bot"):
            assert main(["run"]) == 0
    finally:  # setup_logging's handler writes to this test's captured stderr
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("FTCOST_LOGLEVEL is set but ftcost does not read it") for m in messages)


# -- the store ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["STORE_URL", "FTCOST_STORE"])
def test_an_empty_store_variable_is_refused_like_an_empty_store_path(
    tmp_path: Path, name: str
) -> None:
    message = refusal(tmp_path, env={name: ""})

    assert f"store.path (set by {name}): {name} is set but empty: write the store's location" \
        in message  # fmt: skip
    assert f"or unset {name} to use ftcost-bot.sqlite3" in message


def test_an_empty_older_store_variable_is_ignored_where_store_url_wins() -> None:
    config = load_config(None, {"FTCOST_STORE": "", "STORE_URL": "state.db"})

    assert config.store.path == "state.db"


@pytest.mark.parametrize("location", [":memory:", "sqlite:///:memory:"])
def test_an_in_memory_store_is_accepted_with_a_warning(location: str) -> None:
    [warning] = warnings_for({"STORE_URL": location})

    assert warning.startswith(f"store.path is {location!r} (set by STORE_URL): thread "
                              "contexts, channel settings, subscriptions and prices are lost "
                              "at every restart")  # fmt: skip


def test_a_store_file_gives_no_memory_warning(tmp_path: Path) -> None:
    assert warnings_for({"STORE_URL": str(tmp_path / "s.sqlite3")}) == []


# -- whole numbers from the environment --------------------------------------------------------
@pytest.mark.parametrize(("name", "key", "example"), [
    ("PORT", "port", "3000"),
    ("HEALTH_PORT", "health_port", "3000"),
    ("FTCOST_RATE_LIMIT", "rate_limit_per_minute", "20"),
])  # fmt: skip
def test_a_whole_number_variable_written_as_a_decimal_is_refused(
    tmp_path: Path, name: str, key: str, example: str
) -> None:
    message = refusal(tmp_path, env={name: "3000.0"})

    assert f"{key} (set by {name}): must be a whole number, such as {example} ({name} is " \
        "'3000.0': write digits only)" in message  # fmt: skip


def test_a_port_written_in_digits_is_accepted() -> None:
    assert load_config(None, {"PORT": " 8080 "}).port == 8080


# -- how messages write numbers and secrets ----------------------------------------------------
def test_a_bound_message_writes_an_integer_default_in_full(tmp_path: Path) -> None:
    message = refusal(tmp_path, {"prices": {"max_bytes": 0}})

    assert "prices.max_bytes: 0 is too small: write more than 0 (default 33554432)" in message


def test_a_maximum_that_is_a_whole_number_is_written_in_full(tmp_path: Path) -> None:
    message = refusal(tmp_path, {"prices": {"max_bytes": 2**31}})

    assert "write at most 1073741824 (default 33554432)" in message


def test_a_token_under_discord_names_discord_token(tmp_path: Path) -> None:
    message = refusal(tmp_path, {"discord": {"token": "x"}})

    assert "discord.token: unknown key (secrets are read from the environment only, e.g. " \
        "DISCORD_TOKEN)" in message  # fmt: skip


def test_a_token_under_slack_names_the_slack_variable(tmp_path: Path) -> None:
    message = refusal(tmp_path, {"slack": {"app_token": "x"}})

    assert "e.g. SLACK_APP_TOKEN)" in message
