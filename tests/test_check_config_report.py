"""What ``check-config`` reports of a valid configuration: where ``/healthz`` and
``/metrics`` are really served, which values an environment variable set (over the
file's), and the warnings (a signing secret Socket Mode never uses, no public price
source, a price file that is not there); ``run`` logs the same at start-up. And
``manifest --url``: the request path once, whatever form the address takes."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
import yaml

import bot.__main__ as entry
from bot.__main__ import main, request_url
from bot.config import Config
from bot.config_load import load_config

BOT_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
APP_TOKEN = "xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef"
SIGNING = "0123456789abcdef0123456789abcdef"
DISCORD = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.0123456789abcdefghijklmnopqrstuvwxyzAB"
HTTP = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING}
SOCKET = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN}
VARIABLES = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_TOKEN",
             "FTCOST_CONFIG", "STORE_URL", "FTCOST_STORE", "HEALTH_PORT", "HEALTH_HOST", "PORT",
             "SLACK_API_BASE_URL", "DISCORD_API_BASE_URL", "FTCOST_LOG_LEVEL",
             "FTCOST_RATE_LIMIT")  # fmt: skip


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No variable of the bot's set, and the store in ``tmp_path``."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("FTCOST_STORE", str(tmp_path / "s.sqlite3"))
    return monkeypatch


def check_config(env: pytest.MonkeyPatch, variables: dict[str, str],
                 yml: Path | None = None) -> str:  # fmt: skip
    for name, value in variables.items():
        env.setenv(name, value)
    out = io.StringIO()
    argv = ["--config", str(yml), "check-config"] if yml else ["check-config"]
    assert main(argv, out=out) == 0
    return out.getvalue()


def line(report: str, label: str) -> str:
    return next(ln.strip() for ln in report.splitlines() if ln.strip().startswith(label))


# -- where /healthz and /metrics are served ----------------------------------------------------
def test_a_bare_http_mode_run_says_the_slack_listener_serves_health_and_metrics(env):
    report = check_config(env, HTTP)

    assert line(report, "health port:") == (
        "health port: not set: /healthz and /metrics on the Slack listener 0.0.0.0:3000 "
        "(slack.host:port); set health_port to another port to serve them elsewhere")
    assert "slack: http (POST /slack/events on 0.0.0.0:3000)" in report


def test_the_health_address_of_a_bare_http_run_is_the_slack_listener(env):
    config = load_config(None, {**HTTP, "PORT": "8080"})

    assert config.health_address() == ("0.0.0.0", 8080)
    assert load_config(None, SOCKET).health_address() is None


def test_socket_mode_without_a_health_port_says_nothing_serves_them(env):
    report = check_config(env, SOCKET)

    assert line(report, "health port:").startswith(
        "health port: not set: nothing serves /healthz or /metrics")


def test_a_shared_health_port_in_http_mode_names_the_slack_listener_not_health_host(env):
    report = check_config(env, {**HTTP, "PORT": "3000", "HEALTH_PORT": "3000",
                                "HEALTH_HOST": "127.0.0.1"})  # fmt: skip

    assert line(report, "health port:") == ("health port: 3000 (set by HEALTH_PORT): /healthz "
                                            "and /metrics on the Slack listener 0.0.0.0:3000 "
                                            "(slack.host)")  # fmt: skip


def test_a_health_port_of_its_own_names_health_host_and_who_set_it(env):
    report = check_config(env, {**HTTP, "HEALTH_PORT": "9000", "HEALTH_HOST": "0.0.0.0"})

    assert line(report, "health port:") == ("health port: 9000 (set by HEALTH_PORT): /healthz "
                                            "and /metrics on 0.0.0.0:9000 (health_host "
                                            "(set by HEALTH_HOST))")  # fmt: skip


# -- values the environment set --------------------------------------------------------------
def test_the_containers_variables_are_shown_over_the_files_values(env, tmp_path):
    yml = tmp_path / "ftcost.yml"
    yml.write_text("port: 8000\nhealth_port: 8081\nstore:\n  path: /elsewhere.sqlite3\n")

    report = check_config(env, {**HTTP, "PORT": "3000", "HEALTH_PORT": "3000",
                                "HEALTH_HOST": "0.0.0.0",
                                "STORE_URL": f"sqlite:///{tmp_path}/c.sqlite3"}, yml)  # fmt: skip

    assert f"config file: {yml}" in report
    assert f"store: sqlite:///{tmp_path}/c.sqlite3 (set by STORE_URL, over the file's value)" \
        in report  # fmt: skip
    assert "health port: 3000 (set by HEALTH_PORT, over the file's value)" in report
    assert "on 0.0.0.0:3000; port set by PORT, over the file's value)" in report


@pytest.mark.parametrize(("variable", "value", "shown"), [
    ("FTCOST_LOG_LEVEL", "debug", "log: DEBUG (set by FTCOST_LOG_LEVEL) kv"),
    ("FTCOST_RATE_LIMIT", "0", "rate limit: off (set by FTCOST_RATE_LIMIT)"),
    ("SLACK_API_BASE_URL", "http://127.0.0.1:1/api", "slack api: http://127.0.0.1:1/api/ (set "
                                                     "by SLACK_API_BASE_URL)"),
    ("DISCORD_API_BASE_URL", "http://127.0.0.1:2", "discord api: http://127.0.0.1:2 (set by "
                                                   "DISCORD_API_BASE_URL)"),
])  # fmt: skip
def test_each_value_a_variable_set_says_so(env, variable, value, shown):
    assert shown in check_config(env, {**SOCKET, variable: value})


def test_a_value_from_the_file_alone_is_not_marked(env, tmp_path):
    yml = tmp_path / "ftcost.yml"
    yml.write_text("log:\n  level: warning\n")

    report = check_config(env, SOCKET, yml)

    assert "log: WARNING kv" in report and "(set by FTCOST_STORE)" in line(report, "store:")
    assert "set by" not in line(report, "log:")


# -- warnings ----------------------------------------------------------------------------------
def test_a_signing_secret_socket_mode_never_uses_is_warned_about(env):
    report = check_config(env, {**SOCKET, "SLACK_SIGNING_SECRET": SIGNING})

    assert "slack: socket" in report
    assert "warning: SLACK_SIGNING_SECRET is set but unused: SLACK_APP_TOKEN is set too, so " \
        "Slack runs in Socket Mode" in report  # fmt: skip


def test_http_mode_gives_no_unused_secret_warning(env):
    assert "warning:" not in check_config(env, HTTP)


def test_no_public_price_source_is_warned_about(env, tmp_path):
    yml = tmp_path / "ftcost.yml"
    yml.write_text("prices:\n  clouds: []\n")

    report = check_config(env, SOCKET, yml)

    assert "warning: prices.clouds is empty: no public price source is read" in report
    assert "prices: refresh '0 6 * * *' (UTC) from none; 0 team sheet(s)" in report


def test_no_clouds_with_prices_off_is_not_warned_about(env, tmp_path):
    yml = tmp_path / "ftcost.yml"
    yml.write_text("prices:\n  enabled: false\n  clouds: []\n")

    report = check_config(env, SOCKET, yml)

    assert "warning" not in report and "prices: off" in report


def test_a_price_file_that_is_not_there_is_warned_about(env, tmp_path):
    yml = tmp_path / "ftcost.yml"
    present = tmp_path / "aws.csv"
    present.write_text("")
    yml.write_text(f"prices:\n  clouds: [aws, gcp]\n  cloud_urls: {{aws: {present}, gcp: "
                   f"{tmp_path}/gcp.csv}}\n  team_sheets:\n    - {{workspace: '*', location: "
                   f"'file://{tmp_path}/rates.yaml'}}\n")  # fmt: skip

    report = check_config(env, SOCKET, yml)

    assert f"warning: prices.cloud_urls.gcp: no file {tmp_path}/gcp.csv here" in report
    assert f"warning: prices.team_sheets[0].location: no file {tmp_path}/rates.yaml here" \
        in report  # fmt: skip
    assert "cloud_urls.aws" not in report


def test_run_logs_where_health_is_served_and_the_warnings(env, caplog):
    class Stub:
        def __init__(self, config: Config) -> None:
            pass

        async def run_until_stopped(self) -> None:
            return None

    env.setattr(entry, "Runtime", Stub)
    for name, value in {**SOCKET, "SLACK_SIGNING_SECRET": SIGNING}.items():
        env.setenv(name, value)
    root = logging.getLogger()
    level = root.level
    try:
        with caplog.at_level(logging.INFO, logger="ftcost.bot"):
            assert main(["run"]) == 0
    finally:  # setup_logging's handler writes to this test's captured stderr
        for handler in [h for h in root.handlers if getattr(h, "_ftcost", False)]:
            root.removeHandler(handler)
        root.setLevel(level)
    messages = [r.getMessage() for r in caplog.records]
    assert "ftcost-bot health endpoints: off (no health_port)" in messages
    assert any(m.startswith("SLACK_SIGNING_SECRET is set but unused") for m in messages)


# -- manifest --url ------------------------------------------------------------------------------
@pytest.mark.parametrize(("url", "want"), [
    ("https://bot.example.com", "https://bot.example.com/slack/events"),
    ("https://bot.example.com/", "https://bot.example.com/slack/events"),
    ("https://bot.example.com/slack/events", "https://bot.example.com/slack/events"),
    ("https://bot.example.com/slack/events/", "https://bot.example.com/slack/events"),
    ("https://bot.example.com:8443/slack/events", "https://bot.example.com:8443/slack/events"),
    ("https://example.com/ftcost/slack/events", "https://example.com/ftcost/slack/events"),
])  # fmt: skip
def test_the_request_path_is_written_once_whatever_the_url_gives(url, want):
    assert request_url(url, "/slack/events") == want


def test_manifest_url_ending_with_the_events_path_does_not_repeat_it(env):
    out = io.StringIO()

    assert main(["manifest", "--url", "https://bot.example.com/slack/events"], out=out) == 0
    manifest = yaml.safe_load(out.getvalue())
    assert manifest["settings"]["event_subscriptions"]["request_url"] == \
        "https://bot.example.com/slack/events"  # fmt: skip
    assert "/slack/events/slack/events" not in out.getvalue()


def test_manifest_url_follows_a_configured_events_path(env, tmp_path):
    yml = tmp_path / "bot.yml"
    yml.write_text("slack:\n  events_path: /hooks/slack\n")
    out = io.StringIO()

    assert main(["--config", str(yml), "manifest", "--url",
                 "https://bot.example.com/hooks/slack"], out=out) == 0  # fmt: skip
    assert yaml.safe_load(out.getvalue())["features"]["slash_commands"][0]["url"] == \
        "https://bot.example.com/hooks/slack"  # fmt: skip


@pytest.mark.parametrize("url", ["https://bot.example.com/api", "https://bot.example.com/slack",
                                 "https://bot.example.com/slack/events/x"])
def test_manifest_url_with_another_path_is_refused_saying_how_to_write_it(env, capsys, url):
    out = io.StringIO()

    assert main(["manifest", "--url", url], out=out) == 2
    err = capsys.readouterr().err
    assert out.getvalue() == ""
    assert "--url https://bot.example.com)" in err
    assert "--url https://bot.example.com/slack/events)" in err
    assert "slack.events_path (/slack/events)" in err and "Traceback" not in err


@pytest.mark.parametrize("url", ["https://bot.example.com/?x=1", "https://bot.example.com/#a"])
def test_manifest_url_with_a_query_is_refused(env, capsys, url):
    assert main(["manifest", "--url", url], out=io.StringIO()) == 2
    assert "https://" in capsys.readouterr().err
