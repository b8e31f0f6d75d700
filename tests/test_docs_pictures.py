"""The docs' pictures of Slack and Discord messages come from the payloads the bot builds
now: ``docs/img/payloads.json`` records the SHA-256 of each payload a picture was drawn
from (``docs/render_messages.py``), and the payload is rebuilt here and compared."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docs.render_messages import main
from docs.tools import slack_picture as slack
from docs.tools.canvas import MONO, Box, Line, Text
from docs.tools.discord_picture import DiscordPainter, field_rows
from docs.tools.markup import CodeBlock, Paragraph, Run, Style, discord_pieces, slack_inline
from docs.tools.payloads import (
    IMG_DIR,
    PICTURES,
    RECORD,
    Picture,
    canonical_json,
    payload_sha256,
    read_record,
)
from docs.tools.slack_picture import SlackPainter

MAX_PICTURE_BYTES = 250_000
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
RERUN = "payload changed: run python docs/render_messages.py"


@pytest.mark.parametrize("picture", PICTURES, ids=lambda p: p.file)
def test_picture_was_drawn_from_the_payload_the_bot_builds_now(picture: Picture) -> None:
    recorded = read_record().get(picture.file, {}).get("sha256")
    now = payload_sha256(picture.payload())
    assert recorded == now, f"{RERUN} ({picture.file}: recorded {recorded}, now {now})"


def test_every_picture_is_recorded_and_nothing_else() -> None:
    assert set(read_record()) == {p.file for p in PICTURES}, RERUN


@pytest.mark.parametrize("picture", PICTURES, ids=lambda p: p.file)
def test_picture_is_a_png_small_enough_for_the_docs(picture: Picture) -> None:
    data = (IMG_DIR / picture.file).read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) < MAX_PICTURE_BYTES


def test_payloads_are_deterministic() -> None:
    for picture in PICTURES:
        assert canonical_json(picture.payload()) == canonical_json(picture.payload())


def test_estimate_payloads_hold_the_real_blocks_and_components() -> None:
    slack = next(p for p in PICTURES if p.file == "slack-estimate.png").payload()
    assert [b["type"] for b in slack["blocks"]][:2] == ["header", "context"]
    assert any(b["type"] == "actions" for b in slack["blocks"])
    discord = next(p for p in PICTURES if p.file == "discord-estimate.png").payload()
    assert discord["embeds"][0]["title"] == slack["blocks"][0]["text"]["text"]
    assert discord["components"], "an estimate carries its buttons"


def test_check_mode_passes_on_the_committed_record() -> None:
    assert main(["--check", "--out", str(RECORD.parent)]) == 0


def test_renderer_redraws_every_picture_and_its_record(tmp_path: Path) -> None:
    out = tmp_path
    assert main(["--out", str(out)]) == 0
    for picture in PICTURES:
        assert (out / picture.file).read_bytes().startswith(PNG_MAGIC)
    assert json.loads((out / "payloads.json").read_text()) == read_record()


def test_check_mode_fails_when_a_recorded_hash_differs(tmp_path: Path) -> None:
    out = tmp_path
    record = read_record()
    record[PICTURES[0].file]["sha256"] = "0" * 64
    (out / "payloads.json").write_text(json.dumps(record))
    assert main(["--check", "--out", str(out)]) == 1


# -- reading the markup the pictures draw ------------------------------------------------


def test_slack_mrkdwn_reads_bold_italic_code_and_mentions() -> None:
    runs = slack_inline("*Changed* _seq_ `8k` <@U1> &lt;x&gt;", {"U1": "ada"})
    assert runs == [
        Run("Changed", Style(bold=True)), Run(" "), Run("seq", Style(italic=True)), Run(" "),
        Run("8k", Style(code=True)), Run(" "), Run("@ada", Style(mention=True)), Run(" <x>"),
    ]


def test_slack_asterisks_inside_words_stay_literal() -> None:
    assert slack_inline("6*P*T tokens") == [Run("6*P*T tokens")]


def test_discord_markdown_honours_backslash_escapes_and_bold_before_italic() -> None:
    pieces = discord_pieces("**48.7 GB** *Prices:* \\~0.5 GB\n```\ncard  GB\nh100  48```")
    assert pieces == [
        Paragraph(((Run("48.7 GB", Style(bold=True)), Run(" "),
                    Run("Prices:", Style(italic=True)), Run(" ~0.5 GB")),)),
        CodeBlock("card  GB\nh100  48"),
    ]


# -- drawing ------------------------------------------------------------------------------


def test_slack_divider_is_a_rule_across_the_message() -> None:
    painter = SlackPainter({})
    painter.blocks([{"type": "divider"}])
    (rule,) = [op for op in painter.canvas.ops if isinstance(op, Line)]
    assert (rule.points[0][0], rule.points[-1][0]) == (slack.CONTENT_X,
                                                        slack.CONTENT_X + slack.CONTENT_W)


def test_slack_buttons_are_outlined_boxes_with_bold_labels() -> None:
    painter = SlackPainter({})
    painter.blocks([{"type": "actions", "elements": [
        {"type": "button", "text": {"type": "plain_text", "text": label}} for label in
        ("Full", "LoRA")]}])
    boxes = [op for op in painter.canvas.ops if isinstance(op, Box)]
    labels = [op for op in painter.canvas.ops if isinstance(op, Text)]
    assert [t.text for t in labels] == ["Full", "LoRA"]
    assert all(t.font.bold for t in labels)
    assert len(boxes) == 2 and all(b.edge for b in boxes)
    assert all(b.x < t.x < b.x + b.w for b, t in zip(boxes, labels, strict=True))


def test_slack_code_block_is_monospace_on_grey() -> None:
    painter = SlackPainter({})
    painter.blocks([{"type": "section", "text": {"type": "mrkdwn", "text": "```a\nb```"}}])
    (ground,) = [op for op in painter.canvas.ops if isinstance(op, Box)]
    lines = [op for op in painter.canvas.ops if isinstance(op, Text)]
    assert ground.fill == "#f8f8f8"
    assert [(t.text, t.font.family) for t in lines] == [("a", MONO), ("b", MONO)]


def test_discord_inline_fields_share_rows_of_at_most_three() -> None:
    fields = [{"name": str(i), "value": "v", "inline": i != 4} for i in range(6)]
    assert [[f["name"] for f in row] for row in field_rows(fields)] == [
        ["0", "1", "2"], ["3"], ["4"], ["5"]]


def test_discord_embed_bar_takes_the_embed_colour() -> None:
    painter = DiscordPainter()
    painter.embed({"title": "Llama 3.1 70B · QLoRA", "color": 0x2ECC71})
    ground, bar = [op for op in painter.canvas.ops if isinstance(op, Box)][:2]
    assert (bar.fill, bar.w, bar.h) == ("#2ecc71", 4, ground.h)
