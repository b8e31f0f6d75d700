"""The bot's config, checked beyond its types and reported in one pass: hosts, team sheets'
workspaces, the clouds the price source reads, the schema version, how often prices are
refreshed; every problem in one message, each naming its key, what is wrong and how to
write it, in the operator's words (never pydantic's or PyYAML's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.config import Config, ConfigError
from bot.config_checks import host_problem, schedule_problem, workspace_problem
from bot.config_load import load_config
from catalog.price_sources import DEFAULT_CLOUDS, KNOWN_CLOUDS, MARKETPLACE_CLOUDS
from catalog.skypilot import ACCELERATOR_MAP
from tests.helpers import config_refused, write_config

ROOT = Path(__file__).resolve().parent.parent
LEAKS = ("Value error", "Input should", "String should", "<unicode string>", "dictionary or "
         "instance", "Traceback")  # fmt: skip


def refused(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> str:
    message = config_refused(tmp_path, text, env or {})
    assert not any(leak in message for leak in LEAKS), message
    return message


def sheets(*entries: str) -> str:
    return "prices:\n  team_sheets:\n" + "".join(f"    - {e}\n" for e in entries)


# -- every problem at once ---------------------------------------------------------------------
def test_every_problem_of_every_kind_is_reported_in_one_message(tmp_path):
    message = refused(tmp_path, (
        "port: true\n"                                      # a yes/no where a number goes
        "slack:\n  max_cards: 9\n  comand: /x\n"            # pydantic: a bound, an unknown key
        "store:\n  seen_ttl_hours: 'inf'\n"                 # not finite, written as text
        "prices:\n  schema_version: ../../etc\n"            # a rule on a value
        "  limits:\n    max_change_ratio: 1e300\n"          # past any hold-back
    ))  # fmt: skip

    for key in ("port:", "slack.max_cards:", "slack.comand:", "store.seen_ttl_hours:",
                "prices.schema_version:", "prices.limits.max_change_ratio:"):  # fmt: skip
        assert f"\n  {key} " in message, key
    assert "(6 problems)" in message


def test_the_problems_come_in_the_order_of_the_sections(tmp_path):
    message = refused(tmp_path, "prices:\n  schema_version: x\nport: abc\nslack:\n  host: ''\n")

    keys = [line.split(":")[0].strip() for line in message.splitlines()[1:]]
    assert keys == ["port", "slack.host", "prices.schema_version"]


def test_the_message_blames_the_environment_only_for_what_a_variable_set(tmp_path):
    message = refused(tmp_path, "prices:\n  schema_version: x\n",
                      {"PORT": "3000", "HEALTH_HOST": "0.0.0.0"})  # fmt: skip

    assert message.startswith(f"ftcost-bot: invalid configuration in {tmp_path / 'bot.yml'}:")
    assert "environment" not in message

    message = refused(tmp_path, "prices:\n  schema_version: x\n", {"PORT": "x"})
    assert " and the environment (2 problems):" in message
    assert "port (set by PORT): must be a whole number, such as 3000" in message


def test_a_bad_value_in_the_file_is_reported_even_where_a_variable_replaces_it(tmp_path):
    message = refused(tmp_path, "health_host: 'not a host!'\n", {"HEALTH_HOST": "0.0.0.0"})

    assert "health_host: 'not a host!' is not an IP address" in message
    assert "(in the file; HEALTH_HOST replaces it)" in message


# -- pydantic's and PyYAML's words -------------------------------------------------------------
def test_an_emptied_section_says_so_and_how_to_fix_it(tmp_path):
    message = refused(tmp_path, "slack:\nlog:\n  level: debug\n")

    assert "slack: is empty" in message and "remove the line to keep every default" in message


@pytest.mark.parametrize(("text", "expected"), [
    ("slack:\n  comand: /x\n", "slack.comand: unknown key (did you mean command?)"),
    ("prot: 3000\n", "prot: unknown key (did you mean port?)"),
    ("discord:\n  shard_count: many\n", "discord.shard_count: must be a whole number or 'auto'"),
    ("slack:\n  command: ftcost\n", "slack.command: must be a slash command: / then"),
    ("slack:\n  followup_errors: loud\n", "slack.followup_errors: must be 'ephemeral' or 'ignore'"),
    ("store:\n  thread_ttl_days: 0\n", "store.thread_ttl_days: 0 days is below the minimum, "
     "0.0416667 days (1 hour): write at least 0.0416667 (default 90)"),
    ("prices:\n  schedule: '0 6 * *'\n", "expected 5 fields"),
    ("slack: [a, b]\n", "slack: must be a section"),
    ("prices:\n  clouds: aws\n", "prices.clouds: must be a list"),
])  # fmt: skip
def test_validation_errors_are_worded_for_the_operator(tmp_path, text, expected):
    assert expected in refused(tmp_path, text)


def test_a_yaml_syntax_error_names_the_file_line_and_column_not_a_unicode_string(tmp_path):
    message = refused(tmp_path, "port: 3000\nslack: [unclosed\n")

    assert re.search(r"bot\.yml, line 3, column \d+: is not valid YAML: ", message), message
    assert "check the indentation" in message


# -- hosts -----------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0", "::", "::1", "fe80::1", "localhost",
                                  "bot.internal", "ftcost-1.example.com"])
def test_ip_addresses_and_host_names_are_accepted(host):
    assert host_problem(host) is None


@pytest.mark.parametrize(("host", "why"), [
    ("not a host!", "is not an IP address or a host name"),
    ("999.1.1.1", "is not an IP address (four numbers from 0 to 255)"),
    ("1.2.3", "is not an IP address"),
    ("0.0.0.0:3000", "has a port"),
    ("[::]", "without brackets: ::"),
    (" 127.0.0.1", "has spaces around it"),
    ("", "is empty"),
    ("-bad-.example", "is not an IP address or a host name"),
])  # fmt: skip
def test_a_host_that_cannot_be_listened_on_is_refused_saying_why(host, why):
    problem = host_problem(host)
    assert problem is not None and why in problem


@pytest.mark.parametrize(("text", "key"), [
    ("health_host: 'not a host!'\n", "health_host"),
    ("slack:\n  host: 999.1.1.1\n", "slack.host"),
])  # fmt: skip
def test_check_config_refuses_a_host_the_bot_could_not_listen_on(tmp_path, text, key):
    message = refused(tmp_path, text)

    assert f"{key}: " in message and "such as 127.0.0.1 (this machine only)" in message


def test_a_bad_host_from_the_environment_names_the_variable(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_config(None, {"HEALTH_HOST": "bad host"})

    assert "health_host (set by HEALTH_HOST): 'bad host' is not" in str(err.value)
    assert "invalid configuration in the environment:" in str(err.value)


# -- team sheets' workspaces -------------------------------------------------------------------
@pytest.mark.parametrize("workspace", ["*", "slack:T1", "slack:T0123ABCD", "slack:E0123ABC",
                                       "discord:456", "discord:123456789012345678"])
def test_the_documented_workspaces_are_accepted(workspace):
    assert workspace_problem(workspace) is None


@pytest.mark.parametrize(("workspace", "hint"), [
    ("slack:t123 ", "(did you mean slack:T123?)"),
    ("Slack:T123", "(did you mean slack:T123?)"),
    ("Acme Corp", ""),
    ("slack:", ""),
    ("discord:abc", ""),
    ("all", ""),
])  # fmt: skip
def test_a_workspace_that_could_never_match_is_refused_with_the_forms(workspace, hint):
    problem = workspace_problem(workspace)

    assert problem is not None and "is not a workspace" in problem and hint in problem
    assert "slack:<team id>" in problem and "discord:<server id>" in problem and '"*"' in problem


def test_a_team_sheet_without_a_workspace_is_refused_naming_the_entry(tmp_path):
    message = refused(tmp_path, sheets("{workspace: 'slack:T1', location: /a.yaml}",
                                       "{location: /b.yaml}"))  # fmt: skip

    assert "prices.team_sheets[1].workspace: required" in message
    assert '"*" for every workspace' in message
    assert "team_sheets[0]" not in message


def test_an_empty_workspace_is_as_missing(tmp_path):
    assert "team_sheets[0].workspace: required" in refused(
        tmp_path, "prices:\n  team_sheets:\n    - workspace:\n      location: /a.yaml\n")


def test_a_mistyped_workspace_is_refused_naming_the_entry(tmp_path):
    message = refused(tmp_path, sheets("{workspace: 'slack:t123 ', location: /a.yaml}",
                                       "{workspace: Acme Corp, location: /b.yaml}"))  # fmt: skip

    assert "prices.team_sheets[0].workspace: 'slack:t123 ' is not a workspace (did you mean " \
        "slack:T123?)" in message  # fmt: skip
    assert "prices.team_sheets[1].workspace: 'Acme Corp' is not a workspace" in message


def test_two_sheets_for_one_workspace_are_refused(tmp_path):
    message = refused(tmp_path, sheets("{workspace: '*', location: /a.yaml}",
                                       "{workspace: '*', location: /b.yaml}"))  # fmt: skip

    assert "prices.team_sheets[1].workspace: * already has the sheet of " \
        "prices.team_sheets[0]" in message  # fmt: skip


def test_an_explicit_every_workspace_sheet_loads(tmp_path):
    config = load_config(write_config(tmp_path, sheets("{workspace: '*', location: /a.yaml}",
                                                "{workspace: 'discord:42', location: x.json}")),
                         {})  # fmt: skip

    assert [s.workspace for s in config.prices.team_sheets] == ["*", "discord:42"]


@pytest.mark.parametrize("location", ["not a url", "ftp://example.com/a.yaml", "https://",
                                      "   "])
def test_a_sheet_location_that_is_neither_a_url_nor_a_path_is_refused(tmp_path, location):
    message = refused(tmp_path, sheets(f"{{workspace: '*', location: '{location}'}}"))

    assert "prices.team_sheets[0].location: " in message
    assert "write an http(s):// URL" in message


# -- the clouds, their files, the schema version -------------------------------------------------
def test_every_cloud_the_mapping_rules_name_is_known():
    named = {rule.cloud for rule in ACCELERATOR_MAP if rule.cloud}

    assert named <= set(KNOWN_CLOUDS)
    assert set(DEFAULT_CLOUDS) | set(MARKETPLACE_CLOUDS) <= set(KNOWN_CLOUDS)


def test_an_unknown_cloud_is_refused_naming_the_known_ones(tmp_path):
    message = refused(tmp_path, "prices:\n  clouds: [aws, nosuchcloud, AWS]\n")

    assert "prices.clouds[1]: 'nosuchcloud' is not a cloud of SkyPilot's catalog" in message
    assert ", ".join(sorted(KNOWN_CLOUDS)) in message and "prices.cloud_urls" in message
    assert "prices.clouds[2]: 'AWS' is not a cloud of SkyPilot's catalog (did you mean aws?)" \
        in message  # fmt: skip


def test_a_cloud_listed_twice_is_refused(tmp_path):
    assert "prices.clouds[1]: 'aws' is listed twice" in refused(
        tmp_path, "prices:\n  clouds: [aws, aws]\n")


def test_a_cloud_url_for_a_cloud_not_listed_is_refused_not_ignored(tmp_path):
    message = refused(tmp_path, "prices:\n  clouds: [aws]\n"
                                "  cloud_urls: {coreweave: 'https://example.com/vms.csv'}\n")

    assert "prices.cloud_urls.coreweave: coreweave is not in prices.clouds" in message
    assert "add coreweave to prices.clouds, or remove it here" in message


def test_a_cloud_url_for_a_default_cloud_needs_no_clouds_key(tmp_path):
    text = "prices:\n  cloud_urls: {aws: /data/aws.csv}\n"
    config = load_config(write_config(tmp_path, text), {})

    assert config.prices.cloud_urls == {"aws": "/data/aws.csv"}


def test_a_cloud_url_that_is_not_a_location_is_refused(tmp_path):
    message = refused(tmp_path, "prices:\n  cloud_urls: {aws: 'not a url'}\n")

    assert "prices.cloud_urls.aws: 'not a url' is neither a URL nor a file path" in message


def test_a_cloud_of_ones_own_is_accepted_with_its_file(tmp_path):
    config = load_config(write_config(tmp_path, "prices:\n  clouds: [mycloud]\n"
                                         "  cloud_urls: {mycloud: /data/vms.csv}\n"), {})

    assert config.prices.clouds == ("mycloud",)


def test_no_public_cloud_at_all_is_valid(tmp_path):
    assert load_config(write_config(tmp_path, "prices:\n  clouds: []\n"), {}).prices.clouds == ()


@pytest.mark.parametrize("version", ["../../etc", "8", "v8/../x", "V8", "latest", ""])
def test_a_schema_version_that_is_not_v_and_a_number_is_refused(tmp_path, version):
    message = refused(tmp_path, f"prices:\n  schema_version: '{version}'\n")

    assert "prices.schema_version: " in message and "e.g. v8" in message


# -- how often prices are refreshed --------------------------------------------------------------
@pytest.mark.parametrize("schedule", ["0 6 * * *", "0 * * * *", "@hourly", "@daily",
                                      "@midnight", "@weekly", "@monthly", "@yearly",
                                      "0 */6 * * *", "30 2 * * mon-fri", "0 0 29 2 *"])
def test_schedules_at_most_hourly_are_accepted(schedule):
    assert schedule_problem(schedule) is None


@pytest.mark.parametrize(("schedule", "every"), [
    ("* * * * *", "every minute"), ("*/15 * * * *", "15 minutes apart"),
    ("0,30 * * * *", "30 minutes apart"), ("0-1 6 * * *", "every minute"),
    ("* 6 29 2 *", "every minute"),
])  # fmt: skip
def test_a_schedule_more_often_than_hourly_is_refused(schedule, every):
    problem = schedule_problem(schedule)

    assert problem is not None and every in problem and "at most once an hour" in problem
    assert "@daily" in problem and "'0 6 * * *'" in problem


def test_the_every_minute_schedule_is_refused_at_its_key(tmp_path):
    message = refused(tmp_path, "prices:\n  schedule: '* * * * *'\n")

    assert "prices.schedule: '* * * * *' refreshes prices every minute" in message


def test_a_schedule_that_is_not_cron_names_the_forms(tmp_path):
    message = refused(tmp_path, "prices:\n  schedule: '0 25 * * *'\n")

    assert "prices.schedule: hour: 25 is outside 0-23: write five fields" in message


# -- the documented configuration still loads -------------------------------------------------
def test_the_deploy_guides_every_key_block_passes_every_check(tmp_path):
    guide = (ROOT / "docs" / "deploy.md").read_text("utf-8")
    block = guide.split("# bot.yml: every key, with its default\n", 1)[1].split("```", 1)[0]

    config = load_config(write_config(tmp_path, block), {})
    assert config.model_dump() == Config().model_dump()
    assert config.source == str(tmp_path / "bot.yml")


def test_the_prices_guides_team_sheet_example_loads(tmp_path):
    guide = (ROOT / "docs" / "prices.md").read_text("utf-8")
    block = guide.split("```yaml\nprices:\n  team_sheets:\n", 1)[1].split("```", 1)[0]

    config = load_config(write_config(tmp_path, "prices:\n  team_sheets:\n" + block), {})
    assert [s.workspace for s in config.prices.team_sheets] == ["slack:T0123ABCD", "*"]
