"""Discord inside ``python -m bot``: configuration, the runtime (with Slack in the same
process), and the ``sync-commands`` subcommand."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from adapters.discord.endpoints import DEFAULT_API_BASE_URL
from adapters.discord.runner import settings_from_config
from bot.__main__ import main
from bot.config import ConfigError
from bot.config_load import load_config
from bot.runtime import Runtime
from bot.store import ThreadKey
from tests.fakes import FakeSlack, request_headers, slash_command_body
from tests.fakes.discord_server import FakeDiscord, restore_discord_endpoints, validate_message

SECRET = "test-signing-secret-0123456789"


# ---------------------------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------------------------
def test_discord_defaults_and_environment(tmp_path: Path) -> None:
    config = load_config(None, {"DISCORD_TOKEN": "t"})
    assert config.discord_enabled
    assert config.discord.api_base_url == DEFAULT_API_BASE_URL
    assert config.discord.message_content is False
    assert config.discord.shard_count is None
    settings = settings_from_config(config)
    assert settings.api_base_url == DEFAULT_API_BASE_URL and not settings.message_content

    yml = tmp_path / "bot.yml"
    yml.write_text(json.dumps({"discord": {
        "message_content": True, "shard_count": 4, "shard_ids": [0, 1],
        "thread_auto_archive_minutes": 60, "api_base_url": "http://file.example/api/v10",
    }}))
    config = load_config(yml, {"DISCORD_TOKEN": "tok-SECRET-123",
                               "DISCORD_API_BASE_URL": "http://127.0.0.1:9/api/v10/"})
    settings = settings_from_config(config)
    assert settings.api_base_url == "http://127.0.0.1:9/api/v10"  # the environment wins
    assert settings.message_content and settings.shard_count == 4
    assert settings.shard_ids == (0, 1) and settings.thread_auto_archive_minutes == 60
    assert "tok-SECRET-123" not in repr(config) + repr(config.discord)

    yml.write_text(json.dumps({"discord": {"shard_count": "auto"}}))
    assert settings_from_config(load_config(yml, {})).shard_count == "auto"


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"messge_content": True}, "discord.messge_content: unknown key"),
        ({"shard_count": 0}, "discord.shard_count"),
        ({"shard_ids": [0]}, "shard_ids"),
        ({"shard_count": 2, "shard_ids": [2]}, "shard_ids"),
        ({"thread_auto_archive_minutes": 30}, "thread_auto_archive_minutes"),
        ({"api_base_url": "discord.com"}, "api_base_url"),
        ({"token": "x"}, "environment"),
    ],
)
def test_bad_discord_settings_are_named(tmp_path: Path, section: dict, message: str) -> None:
    yml = tmp_path / "bot.yml"
    yml.write_text(json.dumps({"discord": section}))
    with pytest.raises(ConfigError, match=message):
        load_config(yml, {})


# ---------------------------------------------------------------------------------------------
# Slack and Discord in one process
# ---------------------------------------------------------------------------------------------
@pytest.fixture
async def discord_fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        try:
            yield fake
        finally:
            restore_discord_endpoints()
        assert fake.internal_errors == []


async def test_slack_and_discord_run_in_one_process(
    tmp_path: Path, discord_fake: FakeDiscord
) -> None:
    from adapters.discord.client import ClientSettings
    from adapters.discord.runner import sync_commands

    await sync_commands("discord-token", ClientSettings(api_base_url=discord_fake.base_url),
                        discord_fake.guild_id)
    yml = tmp_path / "bot.yml"
    yml.write_text(json.dumps({"slack": {"host": "127.0.0.1"}}))
    async with FakeSlack() as slack:
        config = load_config(yml, {
            "SLACK_BOT_TOKEN": "xoxb-1-test", "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_BASE_URL": slack.base_url, "PORT": "0",
            "DISCORD_TOKEN": "discord-token", "DISCORD_API_BASE_URL": discord_fake.base_url,
            "FTCOST_STORE": str(tmp_path / "both.sqlite3"),
        })
        runtime = Runtime(config)
        await runtime.start()
        try:
            assert [r.name for r in runtime.runners] == ["slack", "discord"]
            # Discord
            payload = discord_fake.interaction_slash("ftcost", {"query": "8b qlora 20M tokens"})
            await discord_fake.dispatch("INTERACTION_CREATE", payload)
            await discord_fake.wait_for_call("POST", f"/interactions/{payload['id']}/")
            data = discord_fake.interaction_callbacks[-1]["data"]
            assert validate_message(data) == []
            assert data["embeds"][0]["title"].startswith("Llama 3.1 8B · QLoRA")
            # Slack, same process, same store
            body = slash_command_body("8b qlora 20M tokens", channel_id="C1",
                                      response_url=slack.response_url("C1"))
            async with aiohttp.ClientSession() as session, session.post(
                f"http://127.0.0.1:{runtime.port}/slack/events", data=body.encode(),
                headers=request_headers(body, SECRET),
            ) as resp:
                assert resp.status == 200
            (posted,) = await slack.wait_for("chat.postMessage")
            [message] = discord_fake.channel_messages()
            for _ in range(200):
                ctx = await runtime.store.get_thread(
                    ThreadKey("discord", str(discord_fake.channel_id), message["id"]))
                if ctx is not None:
                    break
                await asyncio.sleep(0.01)
            assert ctx is not None and ctx.request.model == "llama-3.1-8b"
            assert await runtime.store.get_thread(
                ThreadKey("slack", "C1", posted.response["ts"])) is not None
            ok, health = await runtime.health()
            assert ok and health["platforms"]["discord"]["ok"] is True
        finally:
            await runtime.stop()


# ---------------------------------------------------------------------------------------------
# python -m bot sync-commands
# ---------------------------------------------------------------------------------------------
@contextlib.contextmanager
def fake_discord_in_a_thread() -> Iterator[FakeDiscord]:
    """A FakeDiscord on its own event loop, for code that calls ``asyncio.run`` itself."""
    loop = asyncio.new_event_loop()
    fake = FakeDiscord()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(fake.start(), loop).result(5)
    try:
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.close(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
        restore_discord_endpoints()


def run_main(argv: list[str], monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_TOKEN",
                 "DISCORD_API_BASE_URL", "FTCOST_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue(), capsys.readouterr().err


def test_sync_commands_subcommand(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    with fake_discord_in_a_thread() as fake:
        env = {"DISCORD_TOKEN": "discord-token", "DISCORD_API_BASE_URL": fake.base_url}
        code, out, _ = run_main(["sync-commands", "--guild", str(fake.guild_id)], monkeypatch,
                                env, capsys)
        assert code == 0 and f"registered /ftcost, /ftcost-help in guild {fake.guild_id}" in out
        assert [c["name"] for c in fake.guild_commands[fake.guild_id]] == ["ftcost",
                                                                            "ftcost-help"]
        code, out, _ = run_main(["sync-commands"], monkeypatch, env, capsys)
        assert code == 0 and "globally" in out
        assert [c["name"] for c in fake.global_commands] == ["ftcost", "ftcost-help"]
        assert not fake.identifies  # HTTP only, no gateway session

        fake.token = "right"
        code, _, err = run_main(["sync-commands"], monkeypatch, env, capsys)
        assert code == 1 and "rejected DISCORD_TOKEN" in err

    code, _, err = run_main(["sync-commands"], monkeypatch, {}, capsys)
    assert code == 2 and "DISCORD_TOKEN" in err


def test_check_config_describes_discord(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    env = {"DISCORD_TOKEN": "MTIz.abc.def"}  # a token's shape: three dot-separated parts
    code, out, _ = run_main(["check-config"], monkeypatch, env, capsys)
    assert code == 0
    assert "discord: on" in out and "warning" not in out
    assert "discord api: https://discord.com/api/v10" in out


def closed_port_api() -> str:
    """A Discord API base URL on a loopback port nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/api/v10"


def test_sync_commands_says_in_one_line_when_discord_cannot_be_reached(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = closed_port_api()
    try:
        code, out, err = run_main(["sync-commands"], monkeypatch,
                                  {"DISCORD_TOKEN": "discord-token",
                                   "DISCORD_API_BASE_URL": base}, capsys)  # fmt: skip
    finally:
        restore_discord_endpoints()

    assert code == 1 and out == ""
    assert err.startswith(f"ftcost-bot: cannot reach the Discord API at {base} "
                          "(ClientConnectorError): check this host's network and DNS")
    assert err.count("\n") == 1 and "Traceback" not in err


async def test_run_and_sync_commands_word_an_unreachable_api_alike(tmp_path: Path) -> None:
    from bot.platform_api import PlatformStartError

    base = closed_port_api()
    config = load_config(None, {"DISCORD_TOKEN": "discord-token", "DISCORD_API_BASE_URL": base,
                                "FTCOST_STORE": str(tmp_path / "s.sqlite3")})
    try:
        with pytest.raises(PlatformStartError) as err:
            await asyncio.wait_for(Runtime(config).start(), 10)
    finally:
        restore_discord_endpoints()

    assert str(err.value).startswith(f"cannot reach the Discord API at {base} "
                                     "(ClientConnectorError): check this host's network")


@pytest.mark.parametrize("guild", ["-5", "0", "abc", "1.5", "18446744073709551616", " "])
def test_sync_commands_refuses_a_guild_id_that_is_not_a_positive_snowflake(
    guild: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        run_main(["sync-commands", "--guild", guild], monkeypatch,
                 {"DISCORD_TOKEN": "discord-token"}, capsys)  # fmt: skip

    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert f"argument --guild: {guild!r} is not a Discord server id" in err
    assert "Copy Server ID" in err


def test_sync_commands_accepts_the_largest_snowflake() -> None:
    from adapters.discord.runner import guild_id

    assert guild_id("18446744073709551615") == 2**64 - 1
    assert guild_id("123456789012345678") == 123456789012345678


def test_sync_commands_logs_no_voice_warnings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    import discord

    # discord.py warns once per process: make it as if no client had been made yet.
    monkeypatch.setattr(discord.VoiceClient, "warn_nacl", True)
    monkeypatch.setattr(discord.VoiceClient, "warn_dave", True)
    with fake_discord_in_a_thread() as fake, caplog.at_level(logging.WARNING):
        code, _, _ = run_main(["sync-commands"], monkeypatch,
                              {"DISCORD_TOKEN": "discord-token",
                               "DISCORD_API_BASE_URL": fake.base_url}, capsys)  # fmt: skip

    assert code == 0
    assert not [r for r in caplog.records if "is not installed" in r.getMessage()]


async def test_the_runner_logs_no_voice_warnings(
    tmp_path: Path, discord_fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import discord

    monkeypatch.setattr(discord.VoiceClient, "warn_nacl", True)
    monkeypatch.setattr(discord.VoiceClient, "warn_dave", True)
    config = load_config(None, {"DISCORD_TOKEN": "discord-token",
                                "DISCORD_API_BASE_URL": discord_fake.base_url,
                                "FTCOST_STORE": str(tmp_path / "s.sqlite3")})
    with caplog.at_level(logging.WARNING):
        async with Runtime(config):
            pass

    assert not [r for r in caplog.records if "is not installed" in r.getMessage()]
