"""The components under each estimate, persistent across restarts.

Row 1: buttons switching to each other method (``Full``, ``QLoRA`` …), doubling the
sequence length and showing the memory chart; row 2: a select of the other cards from the
report's card table.

Every item is a :class:`discord.ui.DynamicItem` whose ``custom_id`` matches a template
from :mod:`adapters.discord.ids`; the client registers the three classes once
(``Client.add_dynamic_items``), so a click on any estimate the bot ever sent, before or
after a restart, is routed here with no per-message state in memory (discord.py does
not even keep the views it sent: they are fully dynamic). The callback hands the parsed
:class:`~adapters.discord.ids.Action` to the client's ``handle_action``.
"""

from __future__ import annotations

import re
from typing import Any, Protocol, runtime_checkable

import discord

from adapters.discord import ids
from adapters.discord.limits import (
    MAX_BUTTON_LABEL,
    MAX_SELECT_OPTION_TEXT,
    MAX_SELECT_OPTIONS,
    cut,
)
from adapters.formats import METHOD_LABELS
from adapters.report import Report
from engine import Method


@runtime_checkable
class ActionHandler(Protocol):
    """What a click is handed to: the bot's client (``FtcostClient.handle_action``)."""

    async def handle_action(
        self, interaction: discord.Interaction, action: ids.Action, values: list[str]
    ) -> None: ...


async def _dispatch(interaction: discord.Interaction, custom_id: str, values: list[str]) -> None:
    """Hand the click on ``custom_id`` to the client, when the id is one of ours and the
    client takes actions (a bare ``discord.Client`` in a test does not)."""
    action = ids.parse_custom_id(custom_id)
    handler = interaction.client
    if action is None or not isinstance(handler, ActionHandler):
        return
    await handler.handle_action(interaction, action, values)


class MethodButton(discord.ui.DynamicItem[discord.ui.Button], template=ids.METHOD_TEMPLATE):
    """Re-estimate with another method."""

    def __init__(self, method: Method, code: str | None) -> None:
        super().__init__(
            discord.ui.Button(
                label=cut(METHOD_LABELS[method], MAX_BUTTON_LABEL),
                style=discord.ButtonStyle.secondary,
                custom_id=ids.method_id(method, code),
            ),
            row=0,
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> MethodButton:
        return cls(Method(match["method"]), match["req"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await _dispatch(interaction, self.custom_id, [])


class SeqButton(discord.ui.DynamicItem[discord.ui.Button], template=ids.SEQ_TEMPLATE):
    """Re-estimate with twice the sequence length."""

    def __init__(self, seq_len: int, code: str | None) -> None:
        super().__init__(
            discord.ui.Button(
                label=cut(f"2× seq ({seq_len * 2:,})", MAX_BUTTON_LABEL),
                style=discord.ButtonStyle.secondary,
                custom_id=ids.seq_id(code),
            ),
            row=0,
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> SeqButton:
        button = cls(1, match["req"])
        if isinstance(item, discord.ui.Button):
            button.item.label = item.label
        return button

    async def callback(self, interaction: discord.Interaction) -> None:
        await _dispatch(interaction, self.custom_id, [])


CHART_BUTTON_LABEL = "Show chart"


class ChartButton(discord.ui.DynamicItem[discord.ui.Button], template=ids.CHART_TEMPLATE):
    """Attach the estimate's memory chart in its thread."""

    def __init__(self, code: str | None) -> None:
        super().__init__(
            discord.ui.Button(
                label=CHART_BUTTON_LABEL,
                style=discord.ButtonStyle.secondary,
                custom_id=ids.chart_id(code),
            ),
            row=0,
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ChartButton:
        return cls(match["req"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await _dispatch(interaction, self.custom_id, [])


class GpuSelect(discord.ui.DynamicItem[discord.ui.Select], template=ids.GPU_TEMPLATE):
    """Re-estimate on another card (the option values are GPU ids)."""

    def __init__(self, options: list[discord.SelectOption], code: str | None) -> None:
        super().__init__(
            discord.ui.Select(
                placeholder="Other cards…",
                options=options or [discord.SelectOption(label="-", value="-")],
                custom_id=ids.gpu_select_id(code),
                min_values=1,
                max_values=1,
            ),
            row=1,
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> GpuSelect:
        options = list(item.options) if isinstance(item, discord.ui.Select) else []
        return cls(options, match["req"])

    async def callback(self, interaction: discord.Interaction) -> None:
        data: Any = interaction.data or {}
        values = [str(v) for v in data.get("values") or []]
        await _dispatch(interaction, self.custom_id, values)


DYNAMIC_ITEMS = (MethodButton, SeqButton, ChartButton, GpuSelect)


def gpu_options(report: Report) -> list[discord.SelectOption]:
    """The report's other cards (not the one asked for), at most 25."""
    seen = {report.request.gpu} if report.request.gpu else set()
    options = []
    for gpu_id, label in report.top_gpus:
        if gpu_id in seen or len(gpu_id) > MAX_SELECT_OPTION_TEXT:
            continue
        seen.add(gpu_id)
        options.append(
            discord.SelectOption(label=cut(label, MAX_SELECT_OPTION_TEXT), value=gpu_id)
        )
    return options[:MAX_SELECT_OPTIONS]


def estimate_view(report: Report) -> tuple[discord.ui.View, bool]:
    """The components of one estimate, and whether their custom ids carry the request
    (when False the caller saves it under the message's store key)."""
    request = report.request
    code = ids.request_code(request)
    view = discord.ui.View(timeout=None)
    for method in report.other_methods:
        view.add_item(MethodButton(method, code))
    if report.doubles_seq:
        view.add_item(SeqButton(request.seq_len, code))
    view.add_item(ChartButton(code))
    options = gpu_options(report)
    if options:
        view.add_item(GpuSelect(options, code))
    return view, code is not None
