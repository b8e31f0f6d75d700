"""The Hub settings read the environment the way the Hub's own tools do: ``HF_TOKEN``
before the token file ``hf auth login`` writes, and ``HF_HUB_OFFLINE`` switching every
request off with an error that names the variable (the cache still answers). The
terminal's ``FTCOST_HUB_TIMEOUT`` is bounded as the bot's ``hub.timeout_s`` is, and each
names itself as what raises the limit."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from catalog.hub import HubError, HubErrorKind
from catalog.hub.resolver import HubResolver, MemoryCache
from catalog.hub.settings import (
    MAX_TOKEN_FILE_BYTES,
    TIMEOUT_ENV,
    HubSettings,
    HubSettingsError,
    token_path,
)
from tests.fakes.hub_configs import LLAMA_3_1_8B, QWEN2_5_7B_INSTRUCT
from tests.fakes.hub_server import TOKEN, FakeHub

HUB_ENV = ("HF_TOKEN", "HF_TOKEN_PATH", "HF_HOME", "XDG_CACHE_HOME", "HF_HUB_OFFLINE",
           "TRANSFORMERS_OFFLINE", "HF_ENDPOINT")  # fmt: skip


@pytest.fixture(autouse=True)
def _clean_hub_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No Hub variable set, and a home directory of this test's own."""
    for name in HUB_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.fixture
async def hub() -> AsyncIterator[FakeHub]:
    async with FakeHub() as fake:
        fake.add_real(QWEN2_5_7B_INSTRUCT)
        yield fake


def resolver_for(hub: FakeHub, cache: MemoryCache | None = None) -> HubResolver:
    return HubResolver(HubSettings(endpoint=hub.base_url, timeout_s=2), cache or MemoryCache())


def write_token(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


# -- where the token file is ---------------------------------------------------------------
def test_token_file_defaults_to_the_user_cache_directory(tmp_path):
    assert token_path() == tmp_path / ".cache" / "huggingface" / "token"


def test_token_file_follows_hf_home(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert token_path() == tmp_path / "hf" / "token"


def test_token_file_follows_xdg_cache_home_when_hf_home_is_unset(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert token_path() == tmp_path / "xdg" / "huggingface" / "token"


def test_hf_token_path_names_the_token_file_outright(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_TOKEN_PATH", str(tmp_path / "elsewhere" / "tok"))
    assert token_path() == tmp_path / "elsewhere" / "tok"


# -- which token is sent -------------------------------------------------------------------
def test_no_token_without_hf_token_or_a_token_file():
    assert HubSettings.token() is None


def test_token_written_by_hf_auth_login_is_used(tmp_path):
    write_token(tmp_path / ".cache" / "huggingface" / "token", "hf_from_login\n")
    assert HubSettings.token() == "hf_from_login"


def test_hf_token_wins_over_the_token_file(monkeypatch, tmp_path):
    write_token(tmp_path / ".cache" / "huggingface" / "token", "hf_from_login")
    monkeypatch.setenv("HF_TOKEN", "hf_from_env")
    assert HubSettings.token() == "hf_from_env"


def test_blank_hf_token_falls_back_to_the_token_file(monkeypatch, tmp_path):
    write_token(tmp_path / ".cache" / "huggingface" / "token", "hf_from_login")
    monkeypatch.setenv("HF_TOKEN", "  ")
    assert HubSettings.token() == "hf_from_login"


@pytest.mark.parametrize(
    "content",
    [b"", b"  \n", b"hf_one\nhf_two\n", b"\xff\xfe not utf-8", b"x" * (MAX_TOKEN_FILE_BYTES + 1)],
    ids=["empty", "blank", "two-lines", "not-utf8", "oversized"],
)
def test_a_token_file_without_one_token_is_ignored_with_a_warning(tmp_path, caplog, content):
    path = write_token(tmp_path / ".cache" / "huggingface" / "token", content)
    with caplog.at_level(logging.WARNING, logger="ftcost.hub"):
        assert HubSettings.token() is None
    assert str(path) in caplog.text and "no token sent" in caplog.text


def test_an_unreadable_token_file_is_ignored_with_a_warning(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("HF_TOKEN_PATH", str(tmp_path))  # a directory: open() fails
    with caplog.at_level(logging.WARNING, logger="ftcost.hub"):
        assert HubSettings.token() is None
    assert "unreadable" in caplog.text


async def test_token_from_the_file_is_sent_to_the_hub_for_a_gated_model(hub, tmp_path):
    hub.add("acme/gated", LLAMA_3_1_8B.config, gated=True)
    write_token(tmp_path / ".cache" / "huggingface" / "token", TOKEN)

    spec = await resolver_for(hub).resolve("acme/gated")

    assert spec.hub is not None and spec.hub.model_type == "llama"
    assert {h.authorization for h in hub.hits("acme/gated")} == {f"Bearer {TOKEN}"}


# -- HF_HUB_OFFLINE -------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["1", "ON", "yes", "True"])
async def test_offline_makes_no_request_and_names_the_variable(hub, monkeypatch, value):
    monkeypatch.setenv("HF_HUB_OFFLINE", value)

    with pytest.raises(HubError) as info:
        await resolver_for(hub).resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert info.value.kind is HubErrorKind.OFFLINE and not info.value.cacheable
    assert f"HF_HUB_OFFLINE={value}" in str(info.value)
    assert "unset HF_HUB_OFFLINE" in str(info.value) and "`models`" in str(info.value)
    assert hub.hits() == []


async def test_transformers_offline_switches_the_hub_off_too(hub, monkeypatch):
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")

    with pytest.raises(HubError, match="TRANSFORMERS_OFFLINE=1"):
        await resolver_for(hub).resolve(QWEN2_5_7B_INSTRUCT.repo)
    assert hub.hits() == []


@pytest.mark.parametrize("value", ["0", "false", "no", ""])
async def test_offline_switch_off_values_leave_the_hub_on(hub, monkeypatch, value):
    monkeypatch.setenv("HF_HUB_OFFLINE", value)

    spec = await resolver_for(hub).resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert spec.hub is not None and hub.hits()


async def test_offline_still_answers_from_the_cache(hub, monkeypatch):
    cache = MemoryCache()
    online = await resolver_for(hub, cache).resolve(QWEN2_5_7B_INSTRUCT.repo)
    asked = len(hub.hits())
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    offline = await resolver_for(hub, cache).resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert offline == online
    assert len(hub.hits()) == asked


async def test_offline_answer_is_not_remembered_once_the_hub_is_back(hub, monkeypatch):
    cache = MemoryCache()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubError):
        await resolver_for(hub, cache).resolve(QWEN2_5_7B_INSTRUCT.repo)
    monkeypatch.delenv("HF_HUB_OFFLINE")

    spec = await resolver_for(hub, cache).resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert spec.hub is not None and spec.hub.model_type == "qwen2"


# -- the request timeout ----------------------------------------------------------------------
def test_the_terminal_reads_its_timeout_from_ftcost_hub_timeout():
    settings = HubSettings.from_environment({TIMEOUT_ENV: " 30 "})

    assert settings.timeout_s == 30
    assert settings.timeout_setting == "FTCOST_HUB_TIMEOUT"


@pytest.mark.parametrize("value", ["", "  "])
def test_an_unset_or_blank_ftcost_hub_timeout_keeps_ten_seconds(value):
    settings = HubSettings.from_environment({TIMEOUT_ENV: value} if value else {})

    assert settings.timeout_s == 10 and settings.timeout_setting == "FTCOST_HUB_TIMEOUT"


def test_the_bots_timeout_is_set_by_its_hub_timeout_s_setting():
    assert HubSettings(timeout_s=30).timeout_setting == "the bot's hub.timeout_s setting"


@pytest.mark.parametrize(("value", "why"), [
    ("1e-9", "FTCOST_HUB_TIMEOUT=1e-09 is below the minimum, 0.1 s"),
    ("0", "FTCOST_HUB_TIMEOUT=0 is below the minimum, 0.1 s"),
    ("-3", "FTCOST_HUB_TIMEOUT=-3 is below the minimum, 0.1 s"),
    ("500", "FTCOST_HUB_TIMEOUT=500 is above the maximum, 120 s"),
    ("inf", "FTCOST_HUB_TIMEOUT=inf is not a finite number"),
    ("nan", "FTCOST_HUB_TIMEOUT=nan is not a finite number"),
    ("10s", "FTCOST_HUB_TIMEOUT='10s' is not a number"),
])  # fmt: skip
def test_a_timeout_outside_a_tenth_of_a_second_to_two_minutes_is_refused_saying_how(
    value, why
):
    with pytest.raises(HubSettingsError) as info:
        HubSettings.from_environment({TIMEOUT_ENV: value})

    assert str(info.value).startswith(why + ": ")
    assert str(info.value).endswith("write seconds from 0.1 to 120, e.g. FTCOST_HUB_TIMEOUT=30 "
                                    "(default 10)")  # fmt: skip


def test_a_long_unreadable_timeout_is_shown_cut():
    with pytest.raises(HubSettingsError) as info:
        HubSettings.from_environment({TIMEOUT_ENV: "x" * 500})

    assert len(str(info.value)) < 200


@pytest.mark.parametrize("timeout_s", [1e-300, 0.09, 120.5])
def test_hub_settings_refuse_a_timeout_outside_the_same_bounds(timeout_s):
    with pytest.raises(ValidationError):
        HubSettings(timeout_s=timeout_s)
