"""Deployment hardening: where /healthz and /metrics listen (and what compose publishes), a
config path that Docker made a directory, secrets of the wrong shape in check-config, a
bounded shutdown, the pinned base image, and a Slack manifest that follows the config.

No Docker engine runs here: the Dockerfile and the compose file are read as text/YAML."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import re
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import web

import bot.runtime as runtime_module
from bot.__main__ import health_address, main, manifest_text
from bot.config import Config, ConfigError
from bot.config_checks import SHOWN_CHARS, secret_warnings
from bot.config_load import load_config
from bot.config_yaml import read_yaml
from bot.runtime import SHUTDOWN_CLOSE_S, SHUTDOWN_FINAL_S, Runtime, shutdown_bound_s
from bot.store_sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parent.parent
BOT_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
APP_TOKEN = "xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef"
DISCORD = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.0123456789abcdefghijklmnopqrstuvwxyzAB"
SECRET_VARS = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_TOKEN")


def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def dockerfile_lines() -> list[str]:
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def cfg(tmp_path: Path, **env: str) -> Config:
    return load_config(None, {"FTCOST_STORE": str(tmp_path / "s.sqlite3"), **env})


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (*SECRET_VARS, "FTCOST_CONFIG", "STORE_URL", "FTCOST_STORE", "HEALTH_PORT",
                 "HEALTH_HOST", "PORT"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


class Runner:
    """A platform runner whose ``stop`` can hang, fail or take a while."""

    def __init__(self, name: str = "dummy", *, stop: str = "ok", delay: float = 0.0,
                 routes: list[web.RouteDef] | None = None) -> None:  # fmt: skip
        self.name, self.mode, self.delay = name, stop, delay
        self._routes = routes or []
        self.stop_timeouts: list[float] = []
        self.stopped = False

    def routes(self) -> list[web.RouteDef]:
        return self._routes

    async def start(self) -> None:
        pass

    async def stop(self, timeout: float = 10.0) -> None:
        self.stop_timeouts.append(timeout)
        if self.mode == "hang":
            await asyncio.Event().wait()  # never set: a drain that never ends
        if self.mode == "fail":
            raise RuntimeError("boom")
        await asyncio.sleep(self.delay)
        self.stopped = True

    async def health(self) -> dict[str, Any]:
        return {"ok": True}


class TrackedStore(SQLiteStore):
    def __init__(self, path: Path, *, hang_on_close: bool = False) -> None:
        super().__init__(path)
        self.hang_on_close = hang_on_close
        self.closed = False

    async def close(self) -> None:
        await super().close()
        if self.hang_on_close:
            await asyncio.Event().wait()
        self.closed = True


# -- 1. where /healthz and /metrics listen ----------------------------------------------------
def test_the_health_listener_defaults_to_loopback_and_follows_health_host(tmp_path):
    assert cfg(tmp_path).health_host == "127.0.0.1"
    assert cfg(tmp_path, HEALTH_HOST="0.0.0.0").health_host == "0.0.0.0"
    yml = tmp_path / "bot.yml"
    yml.write_text("health_host: 10.0.0.5\n")
    assert load_config(yml, {}).health_host == "10.0.0.5"


@pytest.mark.parametrize(("env", "bound"), [({}, "127.0.0.1"),
                                            ({"HEALTH_HOST": "0.0.0.0"}, "0.0.0.0")])
async def test_the_health_only_server_binds_health_host(tmp_path, env, bound):
    config = cfg(tmp_path, HEALTH_PORT="0", **env)
    async with Runtime(config, runners=[Runner()]) as rt:
        assert rt.health_port
        host = rt._sites[-1].addresses[0][0]
        async with aiohttp.ClientSession() as session, \
                session.get(f"http://127.0.0.1:{rt.health_port}/metrics") as resp:  # fmt: skip
            assert resp.status == 200
    assert host == bound


def test_compose_publishes_the_port_on_the_hosts_loopback_and_binds_all_inside():
    bot = compose()["services"]["bot"]
    assert bot["ports"] == ["127.0.0.1:3000:3000"]
    env = bot["environment"]
    assert env["HEALTH_HOST"] == "0.0.0.0"
    published = {p.rsplit(":", 1)[1] for p in bot["ports"]}
    assert {str(env["HEALTH_PORT"]), str(env["PORT"])} <= published
    for service in compose()["services"].values():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), port


def test_the_image_listens_on_every_interface_inside_the_container():
    env = " ".join(ln for ln in dockerfile_lines() if ln.startswith("ENV "))
    assert "HEALTH_HOST=0.0.0.0" in env


def test_check_config_says_where_healthz_listens(clean_env, tmp_path):
    clean_env.setenv("DISCORD_TOKEN", DISCORD)
    clean_env.setenv("FTCOST_STORE", str(tmp_path / "s.sqlite3"))
    clean_env.setenv("HEALTH_PORT", "3000")
    out = io.StringIO()
    assert main(["check-config"], out=out) == 0
    assert "health port: 3000 (set by HEALTH_PORT): /healthz and /metrics on 127.0.0.1:3000 " \
        "(health_host)" in out.getvalue()  # fmt: skip


def test_health_address_follows_the_listener_that_serves_it(tmp_path):
    http = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": "s" * 32}
    assert health_address(cfg(tmp_path)) is None
    assert health_address(cfg(tmp_path, HEALTH_PORT="9000")) == ("127.0.0.1", 9000)
    shared = cfg(tmp_path, HEALTH_PORT="3000", PORT="3000", **http)
    assert health_address(shared) == ("0.0.0.0", 3000)  # slack.host: the HTTP listener
    apart = cfg(tmp_path, HEALTH_PORT="9000", PORT="3000", **http)
    assert health_address(apart) == ("127.0.0.1", 9000)


# -- 2. a config path that is a directory ------------------------------------------------------
def test_a_directory_in_place_of_the_config_file_is_one_clear_line(tmp_path):
    folder = tmp_path / "ftcost.yml"
    folder.mkdir()
    with pytest.raises(ConfigError) as err:
        read_yaml(folder)
    message = str(err.value)
    assert "\n" not in message
    assert f"{folder} is a directory" in message
    assert "Docker creates one when the mounted file is missing" in message
    assert "copy ftcost.example.yml to ftcost.yml" in message


@pytest.mark.parametrize("how", ["flag", "env"])
def test_the_bot_exits_2_naming_the_directory(clean_env, tmp_path, capsys, how):
    folder = tmp_path / "ftcost.yml"
    folder.mkdir()
    clean_env.setenv("DISCORD_TOKEN", DISCORD)
    argv = ["check-config"]
    if how == "flag":
        argv = ["--config", str(folder), *argv]
    else:
        clean_env.setenv("FTCOST_CONFIG", str(folder))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "is a directory" in err and "Traceback" not in err


def test_a_missing_config_file_keeps_its_own_message(tmp_path):
    with pytest.raises(ConfigError, match=r"cannot read config file .*No such file"):
        read_yaml(tmp_path / "absent.yml")


def test_the_deploy_guide_says_to_create_the_file_before_compose_up():
    guide = (ROOT / "docs" / "deploy.md").read_text()
    assert "Create\n`ftcost.yml` before the first `docker compose up`" in guide
    block = guide[guide.index("cp ftcost.example.yml ftcost.yml"):]
    assert block.index("cp ftcost.example.yml") < block.index("docker compose up")


# -- 3. secrets of the wrong shape ------------------------------------------------------------
def test_well_formed_secrets_give_no_warning():
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN, "DISCORD_TOKEN": DISCORD,
           "SLACK_SIGNING_SECRET": "0123456789abcdef0123456789abcdef"}  # fmt: skip
    assert secret_warnings(env) == []
    assert secret_warnings({}) == []


@pytest.mark.parametrize(("env", "expected"), [
    ({"SLACK_BOT_TOKEN": "xoxp-" + BOT_TOKEN[5:]}, "should start 'xoxb-' but starts 'xoxp-'"),
    ({"SLACK_BOT_TOKEN": APP_TOKEN}, "SLACK_BOT_TOKEN and SLACK_APP_TOKEN look swapped"),
    ({"SLACK_APP_TOKEN": BOT_TOKEN}, "SLACK_BOT_TOKEN and SLACK_APP_TOKEN look swapped"),
    ({"SLACK_APP_TOKEN": "abcdefghijklmnopqrstuvwxyz"}, "should start 'xapp-' but starts 'abcde'"),
    ({"SLACK_BOT_TOKEN": f'"{BOT_TOKEN}"'}, "wrapped in quotes"),
    ({"SLACK_SIGNING_SECRET": "'0123456789abcdef'"}, "wrapped in quotes"),
    ({"SLACK_BOT_TOKEN": BOT_TOKEN + "\r"}, "spaces or a line break around it"),
    ({"SLACK_BOT_TOKEN": BOT_TOKEN[:20] + " " + BOT_TOKEN[20:]}, "contains a space"),
    ({"DISCORD_TOKEN": "abcdefghijklmnopqrstuvwxyz"}, "has 1 dot-separated part(s), not 3"),
    ({"DISCORD_TOKEN": "a..b"}, "has an empty part between its dots"),
    ({"DISCORD_TOKEN": "Bot " + DISCORD}, "starts with 'Bot '"),
])  # fmt: skip
def test_a_secret_of_the_wrong_shape_is_warned_about(env, expected):
    warnings = secret_warnings(env)
    assert any(expected in w for w in warnings), warnings


def test_a_quoted_token_of_the_right_kind_gets_only_the_quote_warning():
    assert len(secret_warnings({"SLACK_BOT_TOKEN": f"'{BOT_TOKEN}'"})) == 1


def test_a_short_value_shows_none_of_its_characters():
    (warning,) = secret_warnings({"SLACK_BOT_TOKEN": "hunter2"})
    assert "hunter" not in warning and "is only 7 characters long" in warning


@pytest.mark.parametrize("name", SECRET_VARS)
@pytest.mark.parametrize("value", ['"qwertyuiopasdfghjklzxcvbnm"', " qwerty uiop asdfghjkl zxcv ",
                                   "Bot qwertyuiopasdfghjklzxcvbnm", "zxcvbnmasdfghjklqwertyuiop"])
def test_no_warning_shows_more_than_five_characters_of_a_secret(name, value):
    for warning in secret_warnings({name: value}):
        stripped = value.strip().strip("'\"")
        for i in range(len(stripped) - SHOWN_CHARS):
            assert stripped[i : i + SHOWN_CHARS + 1] not in warning, warning


def test_check_config_prints_the_warnings_and_still_exits_0(clean_env, tmp_path):
    clean_env.setenv("SLACK_BOT_TOKEN", "xoxp-" + BOT_TOKEN[5:])
    clean_env.setenv("SLACK_APP_TOKEN", f'"{APP_TOKEN}"')
    clean_env.setenv("DISCORD_TOKEN", "not-a-discord-token-at-all")
    clean_env.setenv("FTCOST_STORE", str(tmp_path / "s.sqlite3"))
    out = io.StringIO()
    assert main(["check-config"], out=out) == 0
    text = out.getvalue()
    assert "warning: SLACK_BOT_TOKEN should start 'xoxb-'" in text
    assert "warning: SLACK_APP_TOKEN is wrapped in quotes" in text
    assert "warning: DISCORD_TOKEN has 1 dot-separated part(s)" in text
    for secret in (BOT_TOKEN, APP_TOKEN, "not-a-discord-token-at-all"):
        assert secret[: SHOWN_CHARS + 1] not in text and secret[SHOWN_CHARS:] not in text


def test_run_logs_the_warnings_at_start_up(clean_env, tmp_path, caplog):
    import bot.__main__ as entry

    class Stub:
        def __init__(self, config: Config) -> None:
            pass

        async def run_until_stopped(self) -> None:
            return None

    clean_env.setattr(entry, "Runtime", Stub)
    clean_env.setenv("DISCORD_TOKEN", "Bot " + DISCORD)
    clean_env.setenv("FTCOST_STORE", str(tmp_path / "s.sqlite3"))
    root = logging.getLogger()
    level = root.level
    try:
        with caplog.at_level(logging.WARNING, logger="ftcost.bot"):
            assert main(["run"]) == 0
    finally:  # setup_logging's handler writes to this test's captured stderr
        for handler in [h for h in root.handlers if getattr(h, "_ftcost", False)]:
            root.removeHandler(handler)
        root.setLevel(level)
    assert any("DISCORD_TOKEN starts with 'Bot '" in r.getMessage() for r in caplog.records)


# -- 4. a bounded shutdown ---------------------------------------------------------------------
def short(tmp_path: Path, timeout_s: float = 0.3, **env: str) -> Config:
    return cfg(tmp_path, **env).model_copy(update={"shutdown_timeout_s": timeout_s})


@pytest.fixture
def quick_close(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(runtime_module, "SHUTDOWN_CLOSE_S", 0.2)
    monkeypatch.setattr(runtime_module, "SHUTDOWN_FINAL_S", 0.2)
    return 0.4


async def test_stop_is_bounded_when_a_handler_and_a_platform_never_finish(
    tmp_path, quick_close, caplog
):
    started = asyncio.Event()

    async def hang(request: web.Request) -> web.Response:
        started.set()
        await asyncio.Event().wait()  # a handler that never finishes
        raise AssertionError("unreachable")

    runner = Runner(stop="hang", routes=[web.get("/hang", hang)])
    config = short(tmp_path, PORT="0").model_copy(
        update={"slack": Config().slack.model_copy(update={"host": "127.0.0.1"})})
    store = TrackedStore(tmp_path / "s.sqlite3")
    rt = Runtime(config, store=store, runners=[runner])
    await rt.start()
    async with aiohttp.ClientSession() as session:
        request = asyncio.create_task(session.get(f"http://127.0.0.1:{rt.port}/hang"))
        await asyncio.wait_for(started.wait(), 5)
        began = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="ftcost.bot"):
            await asyncio.wait_for(rt.stop(), 5)
        took = time.monotonic() - began
        request.cancel()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await request
    assert took < config.shutdown_timeout_s + quick_close + 0.5
    assert store.closed
    assert any("stopping dummy did not finish in time" in r.getMessage()
               for r in caplog.records)  # fmt: skip


async def test_platforms_drain_at_the_same_time_each_given_the_drain_time(tmp_path):
    slow = [Runner("a", delay=0.4), Runner("b", delay=0.4)]
    rt = Runtime(short(tmp_path, timeout_s=2.0), runners=list(slow))
    await rt.start()
    began = time.monotonic()
    await rt.stop()
    assert time.monotonic() - began < 0.75  # 0.8 s one after the other
    assert all(r.stopped for r in slow)
    assert all(1.5 < r.stop_timeouts[0] <= 2.0 for r in slow)


async def test_a_failing_platform_stops_nothing_else(tmp_path, caplog):
    good = Runner("good")
    store = TrackedStore(tmp_path / "s.sqlite3")
    rt = Runtime(short(tmp_path), store=store, runners=[Runner("bad", stop="fail"), good])
    await rt.start()
    with caplog.at_level(logging.ERROR, logger="ftcost.bot"):
        await rt.stop()
    assert good.stopped and store.closed
    assert any("stopping bad failed" in r.getMessage() for r in caplog.records)


async def test_a_store_that_never_closes_does_not_hold_the_process(tmp_path, quick_close):
    store = TrackedStore(tmp_path / "s.sqlite3", hang_on_close=True)
    rt = Runtime(short(tmp_path), store=store, runners=[Runner()])
    await rt.start()
    began = time.monotonic()
    await asyncio.wait_for(rt.stop(), 5)
    assert time.monotonic() - began < quick_close + 0.3


def test_the_bound_fits_the_compose_grace_period_and_the_guide_states_it():
    config = load_config(ROOT / "ftcost.example.yml", {})
    grace_s = int(str(compose()["services"]["bot"]["stop_grace_period"]).rstrip("s"))
    assert shutdown_bound_s(config) == config.shutdown_timeout_s + SHUTDOWN_CLOSE_S \
        + SHUTDOWN_FINAL_S < grace_s  # fmt: skip
    guide = (ROOT / "docs" / "deploy.md").read_text()
    assert f"`shutdown_timeout_s + {SHUTDOWN_CLOSE_S + SHUTDOWN_FINAL_S:g}` seconds" in guide
    assert f"`T + {SHUTDOWN_CLOSE_S:g} s` (`SHUTDOWN_CLOSE_S`)" in guide
    assert f"{SHUTDOWN_FINAL_S:g} s more (`SHUTDOWN_FINAL_S`)" in guide


# -- 5. the base image -------------------------------------------------------------------------
def test_the_base_image_is_pinned_to_a_python_patch_and_a_debian_release():
    (base,) = [ln.split()[1] for ln in dockerfile_lines() if ln.startswith("FROM ")]
    assert re.fullmatch(r"python:3\.11\.\d+-slim-(bookworm|trixie)(@sha256:[0-9a-f]{64})?", base)
    lock = (ROOT / "requirements.lock").read_text()
    assert "--python-version 3.11" in lock  # the lock is resolved for the image's Python
    assert any("pip install --require-hashes" in ln and "-r requirements.lock" in ln
               for ln in dockerfile_lines())  # fmt: skip


# -- 6. the Slack manifest follows the configuration --------------------------------------------
def test_the_default_manifest_is_the_packaged_file():
    from importlib import resources

    packaged = resources.files("adapters.slack").joinpath("manifest.yml").read_text("utf-8")
    assert manifest_text() == packaged


def test_manifest_uses_the_configured_command_and_path(clean_env, tmp_path):
    yml = tmp_path / "bot.yml"
    yml.write_text("slack:\n  command: /estimate\n  events_path: /hooks/slack\n")
    out = io.StringIO()
    assert main(["--config", str(yml), "manifest"], out=out) == 0
    text = out.getvalue()
    manifest = yaml.safe_load(text)
    (command,) = manifest["features"]["slash_commands"]
    assert command["command"] == "/estimate"
    assert "/ftcost" not in text and "/slack/events" not in text
    assert "/estimate help" in manifest["display_information"]["long_description"]
    assert "# url: https://YOUR-HOST/hooks/slack" in text
    assert manifest["settings"]["socket_mode_enabled"] is True


def test_manifest_url_sets_up_http_mode(clean_env, tmp_path):
    yml = tmp_path / "bot.yml"
    yml.write_text("slack:\n  events_path: /hooks/slack\n")
    out = io.StringIO()
    assert main(["--config", str(yml), "manifest", "--url", "https://bot.example.com/"],
                out=out) == 0  # fmt: skip
    manifest = yaml.safe_load(out.getvalue())
    want = "https://bot.example.com/hooks/slack"
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is False
    assert manifest["features"]["slash_commands"][0]["url"] == want
    assert settings["event_subscriptions"]["request_url"] == want
    assert settings["interactivity"]["request_url"] == want
    # The rest is unchanged: the same scopes and events as the packaged file.
    packaged = yaml.safe_load(manifest_text())
    assert manifest["oauth_config"] == packaged["oauth_config"]
    assert settings["event_subscriptions"]["bot_events"] == \
        packaged["settings"]["event_subscriptions"]["bot_events"]  # fmt: skip


@pytest.mark.parametrize("url", ["http://bot.example.com", "bot.example.com",
                                 "https://bot example.com", 'https://x"y.com'])
def test_manifest_refuses_a_url_slack_cannot_call(clean_env, capsys, url):
    assert main(["manifest", "--url", url], out=io.StringIO()) == 2
    assert "https://" in capsys.readouterr().err


def test_the_guide_says_which_manifest_lines_follow_the_config():
    guide = (ROOT / "docs" / "deploy.md").read_text()
    section = guide[guide.index("### The Slack app manifest"):]
    for line in ("features.slash_commands[0].command", "settings.event_subscriptions.request_url",
                 "settings.interactivity.request_url", "manifest --url"):  # fmt: skip
        assert line in section
