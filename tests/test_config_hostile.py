"""The bot's own YAML config, written wrong or hostile: every case is a ConfigError that
names the key (or line), says what is wrong and how to write it; never a traceback, never
a value taken silently (``true`` as 1, the last of two ``port:``, ``.inf`` as no bound)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.__main__ import main
from bot.config import ConfigError
from bot.config_load import load_config
from bot.config_yaml import MAX_CONFIG_DEPTH


def config_error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bot.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    return str(err.value)


def test_an_impossible_date_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    message = config_error(tmp_path, "store:\n  seen_ttl_hours: 2024-13-45\n")

    assert "store.seen_ttl_hours" in message and "number" in message


def test_nesting_3000_deep_is_a_config_error_not_a_recursion_error(tmp_path: Path) -> None:
    message = config_error(tmp_path, "a: " + "[" * 3000 + "]" * 3000 + "\n")

    assert f"more than {MAX_CONFIG_DEPTH} levels" in message and "line 1" in message


def test_a_5000_digit_number_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    message = config_error(tmp_path, "port: " + "9" * 5000 + "\n")

    assert "port:" in message and "at most 4,300 digits" in message and len(message) < 400


@pytest.mark.parametrize(("text", "key"), [
    ("port: true\n", "port"),
    ("rate_limit_per_minute: no\n", "rate_limit_per_minute"),
    ("prices:\n  limits:\n    max_change_ratio: true\n", "prices.limits.max_change_ratio"),
    ("discord:\n  shard_count: 4\n  shard_ids: [true]\n", "discord.shard_ids[0]"),
])  # fmt: skip
def test_a_yes_no_value_where_a_number_goes_is_refused(
    tmp_path: Path, text: str, key: str
) -> None:
    message = config_error(tmp_path, text)

    assert f"{key}: " in message and "not a number" in message


def test_a_key_set_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    message = config_error(tmp_path, "port: 1\nslack:\n  command: /a\n  command: /b\n")

    assert "slack.command twice (lines 3 and 4)" in message and "keep one" in message


@pytest.mark.parametrize("value", [".inf", ".nan", "-.inf"])
def test_a_change_ratio_that_is_not_finite_is_refused(tmp_path: Path, value: str) -> None:
    message = config_error(tmp_path, f"prices:\n  limits:\n    max_change_ratio: {value}\n")

    assert "prices.limits.max_change_ratio" in message and "finite" in message


def test_a_change_ratio_past_any_hold_back_is_refused(tmp_path: Path) -> None:
    message = config_error(tmp_path, "prices:\n  limits:\n    max_change_ratio: 1e300\n")

    assert "prices.limits.max_change_ratio" in message and "at most 100" in message


def test_an_infinite_price_ceiling_is_refused(tmp_path: Path) -> None:
    message = config_error(tmp_path, "prices:\n  limits:\n    max_price_per_gpu_hour: .inf\n")

    assert "prices.limits.max_price_per_gpu_hour" in message


def test_a_shard_count_of_a_hundred_million_is_refused(tmp_path: Path) -> None:
    message = config_error(tmp_path, "discord:\n  shard_count: 100000000\n  shard_ids: [0]\n")

    assert "discord.shard_count" in message and "at most 10,000" in message


def test_yaml_aliases_are_refused_before_they_expand(tmp_path: Path) -> None:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for name, prev in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")

    message = config_error(tmp_path, "\n".join(lines) + "\n")

    assert "alias *a" in message and "line 2" in message


def test_a_file_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "bot.yml"
    path.write_bytes(b"port: \xff\xfe\n")

    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path, env={})


def test_check_config_exits_2_with_the_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bot.yml"
    path.write_text("store:\n  seen_ttl_hours: 2024-13-45\n", encoding="utf-8")

    status = main(["--config", str(path), "check-config"], out=io.StringIO())

    assert status == 2
    err = capsys.readouterr().err
    assert "store.seen_ttl_hours" in err and "Traceback" not in err


def test_a_sane_config_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "bot.yml"
    path.write_text("port: 3001\nprices:\n  limits:\n    max_change_ratio: 10\n"
                    "    max_price_per_gpu_hour: 50\ndiscord:\n  shard_count: 4\n"
                    "  shard_ids: [0, 1]\n", encoding="utf-8")  # fmt: skip

    config = load_config(path, env={})

    assert config.port == 3001 and config.prices.limits.max_change_ratio == 10.0
    assert config.discord.shard_ids == [0, 1]
