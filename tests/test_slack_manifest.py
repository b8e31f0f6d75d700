"""The app manifest declares exactly what the bot uses."""

from __future__ import annotations

import yaml

from bot.__main__ import manifest_text
from bot.config import SlackSettings


def manifest() -> dict:
    return yaml.safe_load(manifest_text())


def test_slash_command_matches_the_configured_default():
    (command,) = manifest()["features"]["slash_commands"]

    assert command["command"] == SlackSettings().command
    assert command["should_escape"] is False
    assert len(command["description"]) <= 100 and command["usage_hint"]


def test_bot_scopes_are_exactly_the_ones_needed():
    scopes = manifest()["oauth_config"]["scopes"]

    assert sorted(scopes["bot"]) == sorted(
        ["commands", "chat:write", "app_mentions:read", "channels:history", "groups:history",
         "users:read", "files:write", "files:read"]
    )  # fmt: skip
    assert "user" not in scopes


def test_events_interactivity_and_socket_mode():
    settings = manifest()["settings"]

    assert sorted(settings["event_subscriptions"]["bot_events"]) == [
        "app_mention", "message.channels", "message.groups"
    ]
    assert settings["interactivity"]["is_enabled"] is True
    assert settings["socket_mode_enabled"] is True


def test_display_name():
    m = manifest()

    assert m["display_information"]["name"] == "ftcost"
    assert m["features"]["bot_user"]["display_name"] == "ftcost"
    assert len(m["display_information"]["description"]) <= 140


def test_the_manifest_points_at_the_slack_guide_which_exists():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    assert "docs/slack.md" in manifest_text()
    guide = (root / "docs" / "slack.md").read_text("utf-8")
    assert "## Scopes and events" in guide
    for scope in manifest()["oauth_config"]["scopes"]["bot"]:
        assert f"`{scope}`" in guide


def test_relative_links_in_the_platform_guides_resolve():
    import re
    from pathlib import Path

    docs = Path(__file__).resolve().parents[1] / "docs"
    for page in ("slack.md", "discord.md"):
        for target in re.findall(r"\]\((?!https?://|#)([^)#]+)", (docs / page).read_text()):
            assert (docs / target).resolve().exists(), f"{page} links to a missing {target}"
