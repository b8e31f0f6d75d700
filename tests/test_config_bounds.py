"""How long and how often: every interval and time-to-live of the bot's config has a
minimum an admin would expect (a thread kept an hour at least, a purge at most every
minute, a Hub request given a tenth of a second...) and a maximum, and a value past either is
refused naming the key, the bound (with the span it comes to) and the value written."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.__main__ import main
from bot.config_load import load_config
from tests.helpers import config_refused, write_config

ENV = {"DISCORD_TOKEN": "x"}

# (section, key, the smallest value allowed as the message writes it, how it says it)
MINIMUMS = [
    ("store", "seen_ttl_hours", "0.166667", "0.166667 hours (10 minutes)"),
    ("store", "thread_ttl_days", "0.0416667", "0.0416667 days (1 hour)"),
    ("store", "purge_interval_minutes", "1", "1 minute"),
    ("prices", "reload_interval_s", "1", "1 s"),
    ("prices", "lock_ttl_s", "60", "60 s (1 minute)"),
    ("hub", "timeout_s", "0.1", "0.1 s"),
    ("hub", "cache_ttl_days", "0.000694445", "0.000694445 days (1 minute)"),
]
MAXIMUMS = [
    ("store", "seen_ttl_hours", "720 hours (30 days)"),
    ("store", "thread_ttl_days", "3650 days"),
    ("store", "purge_interval_minutes", "10080 minutes (7 days)"),
    ("prices", "reload_interval_s", "86400 s (1 day)"),
    ("prices", "lock_ttl_s", "86400 s (1 day)"),
    ("hub", "timeout_s", "120 s (2 minutes)"),
    ("hub", "cache_ttl_days", "365 days"),
]
ALL_NEAR_ZERO = (
    "store: {thread_ttl_days: 1e-300, purge_interval_minutes: 1e-300, seen_ttl_hours: 1e-300}\n"
    "prices: {reload_interval_s: 1e-300, lock_ttl_s: 1e-300}\n"
    "hub: {timeout_s: 1e-300, cache_ttl_days: 1e-300}\n"
)


def refused(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> str:
    return config_refused(tmp_path, text, env if env is not None else ENV)


@pytest.mark.parametrize(("section", "key", "least", "said"), MINIMUMS,
                         ids=[f"{s}.{k}" for s, k, _, _ in MINIMUMS])  # fmt: skip
def test_a_near_zero_interval_or_ttl_is_refused_naming_key_minimum_and_value(
    tmp_path, section, key, least, said
):
    message = refused(tmp_path, f"{section}:\n  {key}: 1e-300\n")

    assert f"\n  {section}.{key}: 1e-300 " in message
    assert f"is below the minimum, {said}: write at least {least} (default " in message


@pytest.mark.parametrize(("section", "key", "least", "said"), MINIMUMS,
                         ids=[f"{s}.{k}" for s, k, _, _ in MINIMUMS])  # fmt: skip
def test_the_minimum_as_the_message_writes_it_is_accepted(tmp_path, section, key, least, said):
    config = load_config(write_config(tmp_path, f"{section}:\n  {key}: {least}\n"), ENV)

    assert getattr(getattr(config, section), key) == pytest.approx(float(least))


@pytest.mark.parametrize(("section", "key", "said"), MAXIMUMS,
                         ids=[f"{s}.{k}" for s, k, _ in MAXIMUMS])  # fmt: skip
def test_a_value_past_the_maximum_is_refused_naming_the_maximum(tmp_path, section, key, said):
    message = refused(tmp_path, f"{section}:\n  {key}: 1e9\n")

    assert f"{section}.{key}: 1e+09 " in message
    assert f"is above the maximum, {said}: write at most " in message


def test_every_near_zero_setting_is_reported_in_one_message(tmp_path):
    message = refused(tmp_path, ALL_NEAR_ZERO)

    assert "(7 problems)" in message
    assert message.count(": 1e-300 ") == 7


def test_check_config_refuses_near_zero_intervals_instead_of_saying_ok(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("DISCORD_TOKEN", "a.b.c")
    out = io.StringIO()

    status = main(["--config", str(write_config(tmp_path, ALL_NEAR_ZERO)), "check-config"], out=out)

    assert status == 2
    assert "configuration OK" not in out.getvalue()
    assert "store.thread_ttl_days: 1e-300 days is below the minimum" in capsys.readouterr().err


def test_a_variable_past_a_bound_is_named_with_its_value(tmp_path):
    message = refused(tmp_path, "", {**ENV, "FTCOST_RATE_LIMIT": "-5"})

    assert ("rate_limit_per_minute (set by FTCOST_RATE_LIMIT): -5 is below the minimum, 0: "
            "write at least 0 (default 20)") in message  # fmt: skip


def test_a_setting_without_a_unit_is_said_as_a_plain_number(tmp_path):
    message = refused(tmp_path, "port: 70000\n")

    assert "port: 70000 is above the maximum, 65535: write at most 65535 (default 3000)" in message
