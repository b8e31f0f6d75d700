"""Configuration: secrets from the environment only, YAML validated key by key, clear
messages, and ``python -m bot`` refusing to start without credentials."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.__main__ import main, manifest_text
from bot.config import DEFAULT_SLACK_API_BASE_URL, NO_CREDENTIALS_MESSAGE, ConfigError, SlackMode
from bot.config_load import load_config

TOKEN = "xoxb-secret-bot-token-42"
SIGNING = "signing-secret-value-42"
APP_TOKEN = "xapp-1-secret-app-token-42"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bot.yml"
    path.write_text(text)
    return path


def test_defaults_with_no_file_and_no_environment():
    config = load_config(None, {})

    assert config.port == 3000 and config.health_port is None
    assert config.slack_api_base_url == DEFAULT_SLACK_API_BASE_URL
    assert config.slack.command == "/ftcost" and config.slack.events_path == "/slack/events"
    assert config.store.path == "ftcost-bot.sqlite3"
    assert config.slack_mode is None and not config.discord_enabled


def test_socket_mode_when_the_app_token_is_set():
    config = load_config(None, {"SLACK_BOT_TOKEN": TOKEN, "SLACK_APP_TOKEN": APP_TOKEN})

    config.check_credentials()
    assert config.slack_mode is SlackMode.SOCKET


def test_http_mode_with_the_signing_secret():
    config = load_config(None, {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SIGNING})

    config.check_credentials()
    assert config.slack_mode is SlackMode.HTTP


def test_no_credentials_names_every_variable():
    config = load_config(None, {})

    with pytest.raises(ConfigError) as err:
        config.check_credentials()

    for var in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_TOKEN"):
        assert var in str(err.value)


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"SLACK_BOT_TOKEN": TOKEN}, ("SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET")),
        ({"SLACK_APP_TOKEN": APP_TOKEN}, ("SLACK_BOT_TOKEN",)),
        ({"SLACK_SIGNING_SECRET": SIGNING}, ("SLACK_BOT_TOKEN",)),
    ],
)
def test_half_configured_slack_names_the_missing_variable(env, names):
    with pytest.raises(ConfigError) as err:
        load_config(None, env).check_credentials()

    assert all(name in str(err.value) for name in names)
    assert not any(secret in str(err.value) for secret in (TOKEN, SIGNING, APP_TOKEN))


def test_yaml_settings_and_environment_overrides(tmp_path):
    path = write(
        tmp_path,
        "port: 8080\nhealth_port: 8081\n"
        "slack:\n  command: /cost\n  followup_errors: ignore\n  rate_limit_retries: 2\n"
        "store:\n  path: /var/lib/ftcost/state.db\n  seen_ttl_hours: 2\n"
        "log:\n  level: debug\n  format: json\n",
    )

    config = load_config(path, {"PORT": "9000", "FTCOST_STORE": "sqlite:///x.db",
                                "SLACK_API_BASE_URL": "http://127.0.0.1:1/api"})

    assert config.port == 9000 and config.health_port == 8081
    assert config.slack.command == "/cost" and config.slack.followup_errors == "ignore"
    assert config.slack.rate_limit_retries == 2
    assert config.store.path == "sqlite:///x.db" and config.store.seen_ttl_hours == 2
    assert (config.log.level, config.log.format) == ("DEBUG", "json")
    assert config.slack_api_base_url == "http://127.0.0.1:1/api/"


def test_store_url_selects_the_store_and_wins_over_yaml_and_ftcost_store(tmp_path):
    path = write(tmp_path, "store:\n  path: /var/lib/ftcost/state.db\n")

    config = load_config(path, {"FTCOST_STORE": "sqlite:///x.db",
                                "STORE_URL": "redis://:pw-42@redis:6379/0"})  # fmt: skip

    assert config.store.path == "redis://:pw-42@redis:6379/0"
    assert config.store.shown == "redis://:***@redis:6379/0"


def test_an_unsupported_store_scheme_is_a_config_error_naming_the_forms(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_config(None, {"STORE_URL": "postgres://ftcost:pw-42@db/ftcost"})

    message = str(err.value)
    assert "store.path (set by STORE_URL):" in message
    assert "postgres://" in message and "redis://" in message
    assert "pw-42" not in message


def test_a_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_config(None, {"PORT": "eighty", "DISCORD_TOKEN": "x"})

    assert "port (set by PORT):" in str(err.value)


def test_unknown_key_is_an_error_naming_it(tmp_path):
    path = write(tmp_path, "slack:\n  comand: /ftcost\n")

    with pytest.raises(ConfigError) as err:
        load_config(path, {})

    assert "slack.comand: unknown key" in str(err.value)
    assert str(path) in str(err.value)


def test_invalid_value_names_the_key_without_echoing_it(tmp_path):
    path = write(tmp_path, "port: not-a-port\nslack:\n  max_cards: 9\n")

    with pytest.raises(ConfigError) as err:
        load_config(path, {})

    message = str(err.value)
    assert "port:" in message and "slack.max_cards:" in message


@pytest.mark.parametrize("text", [
    "store:\n  thread_ttl_days: .inf\n", "prices:\n  lock_ttl_s: .inf\n",
    "prices:\n  announce_interval_s: .inf\n", "prices:\n  reload_interval_s: .nan\n",
    "prices:\n  timeout_s: 1e400\n",
])
def test_an_endless_time_in_the_config_is_refused_naming_the_key(tmp_path, text):
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text), {"DISCORD_TOKEN": "x"})
    key = text.split(":")[0] + "." + text.split("\n  ")[1].split(":")[0]
    assert f"{key}:" in str(err.value)


@pytest.mark.parametrize(
    "text", ["slack_bot_token: xoxb-in-yaml-123", "slack:\n  signing_secret: abc123456",
             "secrets:\n  slack_bot_token: xoxb-in-yaml-123"]
)
def test_secrets_in_yaml_are_refused_and_not_echoed(tmp_path, text):
    path = write(tmp_path, text)

    with pytest.raises(ConfigError) as err:
        load_config(path, {})

    assert "environment" in str(err.value)
    assert "xoxb-in-yaml-123" not in str(err.value) and "abc123456" not in str(err.value)


def test_bad_yaml_and_missing_file_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "slack: [unclosed"), {})
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yml", {})
    with pytest.raises(ConfigError, match="mapping"):
        load_config(write(tmp_path, "- a\n- b\n"), {})


def test_secrets_never_show_in_repr():
    config = load_config(None, {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SIGNING})

    text = repr(config) + str(config) + config.model_dump_json()
    assert TOKEN not in text and SIGNING not in text
    assert sorted(config.secrets.values()) == sorted([TOKEN, SIGNING])


# -- the command line ------------------------------------------------------------------------
def test_main_without_credentials_exits_2_naming_the_variables(monkeypatch, capsys):
    for var in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_TOKEN",
                "FTCOST_CONFIG"):
        monkeypatch.delenv(var, raising=False)

    status = main([])

    assert status == 2
    assert capsys.readouterr().err.strip() == NO_CREDENTIALS_MESSAGE.strip()


def test_main_with_a_bad_config_key_exits_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING)
    path = write(tmp_path, "prot: 3000\n")

    status = main(["--config", str(path)])

    assert status == 2
    assert "prot: unknown key" in capsys.readouterr().err


def test_check_config_reports_without_secrets(monkeypatch, tmp_path):
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    monkeypatch.delenv("SLACK_SIGNING_SECRET", raising=False)
    monkeypatch.delenv("FTCOST_CONFIG", raising=False)
    out = io.StringIO()

    status = main(["check-config"], out=out)

    text = out.getvalue()
    assert status == 0
    assert "slack: socket" in text and "SLACK_BOT_TOKEN=yes" in text
    assert "SLACK_SIGNING_SECRET=no" in text
    assert TOKEN not in text and APP_TOKEN not in text


def test_manifest_subcommand_prints_the_packaged_manifest():
    out = io.StringIO()

    assert main(["manifest"], out=out) == 0
    assert out.getvalue() == manifest_text()
    assert "/ftcost" in out.getvalue()


def test_check_config_shows_the_store_without_its_password(monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    monkeypatch.delenv("FTCOST_CONFIG", raising=False)
    monkeypatch.setenv("STORE_URL", "rediss://ftcost:pw-42@redis.internal:6380/1")
    out = io.StringIO()

    status = main(["check-config"], out=out)

    assert status == 0
    assert "store: rediss://ftcost:***@redis.internal:6380/1" in out.getvalue()
    assert "pw-42" not in out.getvalue()


def test_a_malformed_redis_url_is_a_config_error_without_its_password():
    expected = r"store\.path \(set by STORE_URL\): .*invalid Redis URL"
    with pytest.raises(ConfigError, match=expected) as err:
        load_config(None, {"STORE_URL": "redis://:pw-42@redis:port/0"})

    assert "pw-42" not in str(err.value)


def test_check_config_refuses_an_unsupported_store(monkeypatch, capsys):
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    monkeypatch.delenv("FTCOST_CONFIG", raising=False)
    monkeypatch.setenv("STORE_URL", "mongodb://db/ftcost")

    status = main(["check-config"])

    assert status == 2
    assert "unsupported store scheme mongodb://" in capsys.readouterr().err


def test_deploy_guide_configuration_block_is_a_valid_configuration():
    from pathlib import Path

    import yaml

    from bot.config import Config

    readme = (Path(__file__).resolve().parent.parent / "docs" / "deploy.md").read_text()
    block = readme.split("# bot.yml: every key, with its default\n", 1)[1].split("```", 1)[0]
    data = yaml.safe_load(block)
    assert Config.model_validate(data) == Config()
