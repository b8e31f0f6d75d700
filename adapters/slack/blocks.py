"""Block Kit rendering of the shared :class:`~bot.service.Reply`.

Every function returns ``{"text": ..., "blocks": [...]}``, ready for
``chat.postMessage`` / ``chat.postEphemeral`` / ``respond()``. ``text`` is the
notification fallback.

Three rules hold everywhere:

* every dynamic string that lands in ``mrkdwn`` (and the ``text`` fallback) goes
  through :func:`escape` (``&``, ``<``, ``>``), so text a user typed can never become
  ``@channel``, a mention or a link when the bot echoes it;
* the text of errors, notices and price confirmations (which repeats the user's words)
  goes through :func:`reply_mrkdwn`: the bot's own code spans stay code, and nothing
  else can format (Slack has no escape character: see there);
* Slack's Block Kit limits are respected by construction: at most 50 blocks, 3,000
  characters per section or text object, 150 per header, 75 per button or option
  text, 2,000 per button value, 10 context elements, 25 actions elements. Long
  tables lose rows (with a "… N more" line) rather than break the message.
"""

from __future__ import annotations

import re
from typing import Any, Final

from adapters.formats import METHOD_LABELS
from adapters.report import FRAMEWORK_LABELS, Report
from adapters.slack.announce import prices_blocks, prices_text
from bot.service import Reply, ReplyKind, request_to_compact_json
from catalog.echo import backticks_as_quotes
from engine import Method, Request
from engine.choices import Framework
from engine.estimate import question

MAX_BLOCKS = 50
MAX_TEXT = 3000  # section text, and any mrkdwn text object (context elements)
MAX_HEADER = 150
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_OPTIONS = 100
MAX_FALLBACK_TEXT = 3000  # far below the 40,000 hard limit: it is a notification line
MAX_QUERY_ECHO = 500
"""Characters of the user's question quoted back ("Asked: ..."), cut before escaping: a
2,000-character paste escapes to far more than a 3,000-character text object holds."""

ACTION_PREFIX = "ftcost_"
ACTION_METHOD = "ftcost_method_"  # + full | lora | qlora
ACTION_SEQ = "ftcost_seq_double"
ACTION_GPU = "ftcost_gpu"
ACTION_CHART = "ftcost_chart"
ACTION_FRAMEWORK = "ftcost_framework"
FRAMEWORK_BLOCK_ID = "ftcost_framework"
"""Upload the estimate's memory chart (``adapters.chart``) into its thread."""
ACTIONS_BLOCK_ID = "ftcost_actions"
ACTION_ID_RE = re.compile(r"^ftcost_(method_(full|lora|qlora)|seq_double|gpu|chart|framework)$")
CHART_BUTTON_TEXT = "Show chart"

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def escape(text: object) -> str:
    """Escape a string for Slack ``mrkdwn`` (and the ``text`` field): ``&`` ``<`` ``>``."""
    return str(text).translate(_ESCAPES)


CODE_SPAN = re.compile(r"(?s:```.+?```)|`[^`\n]+`")
"""One of the bot's code spans in a reply's text: inline (`` `/ftcost set framework hf` ``)
or fenced (a config pasted in ```` ```...``` ````). The neutral layer writes its examples
so, and turns a user's backticks into quotes."""
MARKUP_LOOKALIKES: Final = {"*": "\u2217", "_": "\u02cd", "~": "\u223c"}
"""Slack's emphasis marks and the characters shown for them in a user's words (∗ asterisk
operator, ˍ modifier letter low macron, ∼ tilde operator): Slack has no escape
character, and a zero width space beside a mark makes it *more* likely to format (Slack
reads it as a word's edge)."""


def _ascii_word_char(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _inert_prose(text: str) -> str:
    """Reply text outside a code span, made inert: ``& < >`` escaped, a stray backtick a
    quote, an emphasis mark at a word's edge (``*bold*``, ``_it_``, ``~st~``) its
    look-alike. A mark inside a word (``rtx_4090``, ``max_steps``) never formats in Slack
    and is kept, so names stay as written."""
    out = []
    for i, char in enumerate(text):
        look = MARKUP_LOOKALIKES.get(char)
        inside = (0 < i < len(text) - 1 and _ascii_word_char(text[i - 1])
                  and _ascii_word_char(text[i + 1]))
        out.append(char if look is None or inside else look)
    return escape(backticks_as_quotes("".join(out)))


def reply_mrkdwn(text: str) -> str:
    """A reply's text (an error, a notice, a price confirmation) as ``mrkdwn``: the bot's
    code spans (:data:`CODE_SPAN`) kept as code, escaped (``& < >``) only, since Slack
    formats nothing inside one; everything else, where the user's words are quoted,
    made inert by :func:`_inert_prose`. Backticks in a reply's text are the bot's: the
    neutral layer makes a user's backticks quotes before it quotes their words (no
    renderer can tell which backtick of ``"`x" is not … `generic``` is whose)."""
    parts: list[str] = []
    last = 0
    for match in CODE_SPAN.finditer(text):
        parts += [_inert_prose(text[last : match.start()]), escape(match.group())]
        last = match.end()
    parts.append(_inert_prose(text[last:]))
    return "".join(parts)


_LINK_RE = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")


BROADCASTS = frozenset({"channel", "here", "everyone"})
"""Slack's broadcast mentions (``<!channel>``, ``<!here>``, ``<!everyone>``)."""


def _special_plain(command: str, label: str | None) -> str:
    """A ``<!...>`` token as it reads: a date (``<!date^1392734382^{date}|Feb 18>``) its
    fallback text, a user group (``<!subteam^S1|@gpu-team>``) or a broadcast (``<!here>``)
    its ``@name``, without a second ``@``."""
    name, _, rest = command.partition("^")
    if name == "date":
        return label or ""
    if not label:
        label = rest.split("^")[0] if name == "subteam" and rest else name
    return label if label.startswith("@") else "@" + label


def slack_to_plain(text: str, bot_user_id: str | None = None) -> str:
    """What a person typed, from Slack's encoded message text: the bot's own mention
    removed, ``<@U1>`` -> ``@U1``, ``<!channel>`` -> ``@channel``,
    ``<!subteam^S1|@team>`` -> ``@team``, ``<!date^...|Feb 18>`` -> ``Feb 18``,
    ``<#C1|general>`` -> ``#general``, ``<https://x|label>`` -> ``label``, entities
    decoded."""

    def plain(match: re.Match[str]) -> str:
        target, label = match.group(1), match.group(2)
        if bot_user_id and target == f"@{bot_user_id}":
            return " "
        if target.startswith("!"):
            return _special_plain(target[1:], label)
        if target.startswith(("@", "#")):
            if not label:
                return target
            return label if label.startswith(target[0]) else target[0] + label
        return label or target

    out = _LINK_RE.sub(plain, text)
    out = out.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(out.split())


_GROUP_MENTION_RE = re.compile(
    r"<!(?:subteam\^[^|>]+|(?:" + "|".join(sorted(BROADCASTS)) + r")(?:\^[^|>]*)?)(?:\|[^>]*)?>"
)
"""A user-group mention (``<!subteam^S1|@gpu-team>``) or a broadcast (``<!channel>``,
``<!here>``, ``<!everyone>``, with or without a label)."""


def mentions_other_user(text: str, bot_user_id: str | None) -> bool:
    """True when Slack-encoded ``text`` mentions someone other than the bot: another user
    (``<@U2>``), a user group (``<!subteam^S1|@gpu-team>``) or everyone in the channel
    (``<!channel>``, ``<!here>``, ``<!everyone>``)."""
    for match in re.finditer(r"<@([A-Z0-9]+)(?:\|[^>]*)?>", text):
        if match.group(1) != bot_user_id:
            return True
    return _GROUP_MENTION_RE.search(text) is not None


def mentions_bot(text: str, bot_user_id: str | None) -> bool:
    """True when Slack-encoded ``text`` mentions the bot."""
    if not bot_user_id:
        return False
    return re.search(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", text) is not None


# ------------------------------------------------------------------------------------------
# limits


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain_text(text: str, limit: int) -> dict[str, Any]:
    return {"type": "plain_text", "text": _cut(text, limit) or " ", "emoji": True}


def _echo(query: str) -> str:
    """The user's question for inline code: cut, backticks made quotes, then escaped."""
    return escape(backticks_as_quotes(_cut(query, MAX_QUERY_ECHO)))


def _mrkdwn(text: str) -> dict[str, Any]:
    return {"type": "mrkdwn", "text": _cut(text, MAX_TEXT) or " "}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(text)}


def _code_section(title: str, lines: list[str], limit: int = MAX_TEXT) -> dict[str, Any]:
    """``*title*`` over a code block of ``lines`` (escaped here), dropping trailing lines
    with a "… N more" marker until it fits in ``limit`` characters."""
    head = f"*{escape(title)}*\n" if title else ""
    body = [escape(line) for line in lines]
    shown = len(body)
    while True:
        kept = body[:shown]
        if shown < len(body):
            kept.append(f"… {len(body) - shown} more")
        text = head + "```" + "\n".join(kept) + "```"
        if len(text) <= limit or shown == 0:
            return _section(text)
        shown -= 1


def _lines_element(prefix: str, items: list[str], more: str) -> dict[str, Any]:
    """One mrkdwn context element: ``prefix`` + one escaped line per item, cut at whole
    lines to fit a text object."""
    lines = [escape(i) for i in items]
    shown = len(lines)
    while True:
        text = prefix + "\n".join(lines[:shown])
        if shown < len(lines):
            text += f"\n… {len(lines) - shown} more {more}"
        if len(text) <= MAX_TEXT or shown == 0:
            return _mrkdwn(text)
        shown -= 1


def _chunks(text: str, size: int) -> list[list[str]]:
    """Split ``text`` into groups of whole lines whose escaped code block fits ``size``."""
    groups: list[list[str]] = [[]]
    used = 0
    for line in text.splitlines():
        cost = len(escape(line)) + 1
        if groups[-1] and used + cost > size:
            groups.append([])
            used = 0
        groups[-1].append(line)
        used += cost
    return groups


# ------------------------------------------------------------------------------------------
# estimates


def _fallback(report: Report, changes: list[str]) -> str:
    parts = [f"{report.title}: {report.headline}"]
    if report.cost_line:
        parts.append(report.cost_line)
    if changes:
        parts.insert(0, "What if " + ", ".join(changes) + ".")
    return _cut(escape(" ".join(parts)), MAX_FALLBACK_TEXT)


def button_value(request: Request) -> str:
    """The request a button acts on, as compact JSON ("" if it would not fit): under a
    limit answer the question, which the click solves again (``engine.estimate.question``)."""
    value = request_to_compact_json(question(request))
    return value if len(value) <= MAX_BUTTON_VALUE else ""


def _button(action_id: str, text: str, value: str) -> dict[str, Any]:
    return {
        "type": "button",
        "action_id": action_id,
        "text": _plain_text(text, MAX_BUTTON_TEXT),
        "value": value,
    }


def action_elements(report: Report) -> list[dict[str, Any]]:
    """Switch method, double the sequence length, show the chart, other cards."""
    request = report.request
    value = button_value(request)
    elements: list[dict[str, Any]] = []
    for method in report.other_methods:
        elements.append(_button(ACTION_METHOD + method.value, METHOD_LABELS[method], value))
    if report.doubles_seq:
        elements.append(_button(ACTION_SEQ, f"2× seq ({request.seq_len * 2:,})", value))
    elements.append(_button(ACTION_CHART, CHART_BUTTON_TEXT, value))
    options = []
    seen = {request.gpu} if request.gpu else set()
    for gpu_id, label in report.top_gpus:
        if gpu_id in seen or len(gpu_id) > MAX_OPTION_VALUE:
            continue
        seen.add(gpu_id)
        options.append({"text": _plain_text(label, MAX_OPTION_TEXT), "value": gpu_id})
    if options:
        elements.append(
            {
                "type": "static_select",
                "action_id": ACTION_GPU,
                "placeholder": _plain_text("Other cards", 150),
                "options": options[:MAX_OPTIONS],
            }
        )
    return elements


def framework_select(current: Framework) -> dict[str, Any]:
    """The framework control: re-runs the estimate under another framework profile
    (``engine.profiles``); the current one is preselected."""
    options = [{"text": _plain_text(label, MAX_OPTION_TEXT), "value": fw.value}
               for fw, label in FRAMEWORK_LABELS.items()]
    return {
        "type": "static_select",
        "action_id": ACTION_FRAMEWORK,
        "placeholder": _plain_text("Framework", 150),
        "options": options,
        "initial_option": next(o for o in options if o["value"] == current.value),
    }


def framework_block(report: Report) -> dict[str, Any]:
    """The framework line, with the control that re-runs the estimate under another."""
    text = f"*Framework:* {escape(FRAMEWORK_LABELS[report.request.framework])}"
    return {"type": "section", "block_id": FRAMEWORK_BLOCK_ID, "text": _mrkdwn(text),
            "accessory": framework_select(report.request.framework)}


def framework_from_action(action: dict[str, Any]) -> Framework | None:
    """The framework a framework-select action picked (None if not one)."""
    value = ((action.get("selected_option") or {}).get("value") or "").strip()
    try:
        return Framework(value)
    except ValueError:
        return None


def estimate_message(
    reply: Reply,
    *,
    asked_by: str | None = None,
    query: str | None = None,
    note: str | None = None,
    max_cards: int = 6,
    buttons: bool = True,
) -> dict[str, Any]:
    """The estimate: header, headline, breakdown bar, cards, what-ifs, warnings and
    assumptions, buttons. ``asked_by`` is a Slack user id; ``query`` the user's text
    (escaped here); ``note`` extra mrkdwn shown last (already escaped by the caller)."""
    report = reply.report
    if report is None:
        raise ValueError("estimate_message needs an estimate reply")
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": _plain_text(report.title, MAX_HEADER)},
    ]
    context = [_mrkdwn(escape(report.subtitle))]
    who = f"<@{asked_by}>" if asked_by and re.fullmatch(r"[A-Z0-9]+", asked_by) else None
    if query:
        asked = f"{who} asked" if who else "Asked"
        context.append(_mrkdwn(asked + ": `" + _echo(query) + "`"))
    elif who:
        context.append(_mrkdwn(f"Requested by {who}"))
    if reply.changes:
        context.append(_mrkdwn("*Changed* " + escape(", ".join(reply.changes))))
    blocks.append({"type": "context", "elements": context})

    lines = [f"*{escape(report.headline)}*"]
    if report.cost_line:
        lines.append(escape(report.cost_line))
    if report.price_line:
        lines.append("_Prices:_ " + escape(report.price_line))
    lines += [f"_{escape(n)}_" for n in report.notes]
    blocks.append(_section("\n".join(lines)))

    blocks.append(_code_section("Memory per GPU", [report.bar(40), *report.legend()]))
    cards = report.cards
    if cards.rows:
        table = cards.render(max_rows=max_cards).splitlines()
        if len(cards.rows) > max_cards:
            table.append(f"… {len(cards.rows) - max_cards} more cards")
        blocks.append(_code_section("Cards", table))
    if report.what_if.rows:
        blocks.append(_code_section("What if", report.what_if.render().splitlines()))

    tail = []
    if report.warnings:
        tail.append(_lines_element("", [f"⚠️ {w}" for w in report.warnings], "warnings"))
    if report.assumptions:
        tail.append(_lines_element("*Assumptions*\n", report.assumptions, "assumptions"))
    if tail:
        blocks.append({"type": "context", "elements": tail})
    if note:
        blocks.append({"type": "context", "elements": [_mrkdwn(note)]})
    if buttons:
        blocks.append(framework_block(report))
        elements = action_elements(report)
        if elements:
            blocks.append(
                {"type": "actions", "block_id": ACTIONS_BLOCK_ID, "elements": elements[:25]}
            )
    return {"text": _fallback(report, reply.changes), "blocks": blocks[:MAX_BLOCKS]}


# ------------------------------------------------------------------------------------------
# help, listings, errors


def text_message(reply: Reply, command: str = "/ftcost") -> dict[str, Any]:
    """Help and catalog listings: a title over monospace text, split across sections."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": _plain_text(reply.title, MAX_HEADER)}
    ]
    groups = _chunks(reply.text, MAX_TEXT - 40)
    room = MAX_BLOCKS - 2  # the header and the closing context block
    if len(groups) > room:
        left = sum(len(g) for g in groups[room - 1 :])
        groups = [*groups[: room - 1], [*groups[room - 1][:-1], f"… {left} more lines"]]
    for group in groups:
        blocks.append(_code_section("", group))
    if reply.kind is ReplyKind.HELP:
        blocks.append(
            {
                "type": "context",
                "elements": [
                    _mrkdwn(
                        "Reply in an estimate's thread to change it, or use its buttons. "
                        f"`{command} models` and `{command} gpus` list the catalog."
                    )
                ],
            }
        )
    first = reply.text.strip().splitlines()[0] if reply.text.strip() else reply.title
    return {"text": _cut(escape(f"{reply.title}: {first}"), MAX_FALLBACK_TEXT), "blocks": blocks}


def error_message(
    reply: Reply, query: str | None = None, command: str = "/ftcost"
) -> dict[str, Any]:
    """An error, for the asker only: for a bad query the parser's message (the bad word,
    the nearest known ones, one example) and where the query language is explained; for
    an error with a title (``Channel settings``, ``Training config``: not the query
    language's) the message alone."""
    text = reply_mrkdwn(reply.text)
    lines = [f":warning: {text}"]
    if query:
        lines.append("You asked: `" + _echo(query) + "`")
    blocks = [_section("\n".join(lines))]
    if not reply.title:
        blocks.append({"type": "context",
                       "elements": [_mrkdwn(f"`{command} help` shows the query language.")]})
    return {"text": _cut(text, MAX_FALLBACK_TEXT), "blocks": blocks}


def message_for(reply: Reply, *, command: str = "/ftcost", **kwargs: Any) -> dict[str, Any]:
    """The message for any reply kind (``kwargs`` go to :func:`estimate_message`)."""
    if reply.kind is ReplyKind.ESTIMATE:
        return estimate_message(reply, **kwargs)
    if reply.kind is ReplyKind.ERROR:
        return error_message(reply, query=kwargs.get("query"), command=command)
    if reply.kind is ReplyKind.PRICES:
        return prices_message(reply, command)
    if reply.kind is ReplyKind.SETTINGS:
        return notice_message(reply.text)
    return text_message(reply, command=command)


def notice_message(text: str) -> dict[str, Any]:
    """A short plain answer (a channel setting changed, the channel's settings)."""
    shown = reply_mrkdwn(text)
    return {"text": _cut(shown, MAX_FALLBACK_TEXT), "blocks": [_section(shown)]}


def prices_message(reply: Reply, command: str = "/ftcost") -> dict[str, Any]:
    """``prices`` / ``subscribe`` / ``unsubscribe``: the price table or a confirmation
    (``command``: the app's slash command, which the table's footer names)."""
    price = reply.prices
    if price is not None and price.view is not None:
        return {
            "text": _cut(escape(prices_text(price.view)), MAX_FALLBACK_TEXT),
            "blocks": prices_blocks(price.view, price.subscription, command),
        }
    return notice_message(reply.text)


def invite_note(bot_user_id: str | None, chart: bool = False) -> str:
    who = f"<@{bot_user_id}>" if bot_user_id else "the ftcost app"
    what = "threaded what-ifs and charts" if chart else "threaded what-ifs"
    return (
        f"I'm not a member of this channel, so this estimate can't start a thread. "
        f"Invite me with `/invite {who}` to get {what} here."
    )


def chart_failed_message(error: str | None) -> dict[str, Any]:
    """For the asker only: the chart could not be attached, why, and what to do."""
    if error == "missing_scope":
        why = (
            "this Slack app may not upload files: reinstall it from the current manifest "
            "(it asks for the `files:write` scope)."
        )
    elif error in ("not_in_channel", "channel_not_found"):
        why = "I'm not a member of this channel: invite me with `/invite` and ask again."
    else:
        why = f"Slack said `{escape(error or 'unknown error')}`. Please try again."
    text = f":warning: I couldn't attach the chart: {why}"
    return {"text": _cut(text, MAX_FALLBACK_TEXT), "blocks": [_section(text)]}


def method_from_action(action_id: str) -> Method | None:
    if action_id.startswith(ACTION_METHOD):
        try:
            return Method(action_id[len(ACTION_METHOD) :])
        except ValueError:
            return None
    return None
