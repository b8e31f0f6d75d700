"""The application commands: ``/ftcost`` and ``/ftcost-help``.

``/ftcost`` has one free-text option in the shared query language and seven structured
ones for those who prefer them; all are optional, and an empty ``/ftcost`` shows help.

========  =========================================================================
query     the whole question: ``70b qlora 50M tokens h100``, ``what if 8k seq``, ``help``
model     autocomplete from the catalog (ids, names, aliases, sizes such as ``70b``)
gpu       autocomplete from the catalog, a count kept: ``8x h100``
method    a choice: Full fine-tune, LoRA, QLoRA
tokens    dataset size: ``50M``, ``1.2B``
seq       sequence length: ``8k``, ``4096``
epochs    a number: ``2``, ``0.5``
framework a choice: generic, HF / TRL / PEFT, Unsloth, torchtune, LitGPT, torchtitan
config    a training config file (axolotl, TRL/Transformers, torchtune, LLaMA-Factory;
          YAML or JSON, up to 64 KB): estimated, the other options and words on top
========  =========================================================================

Commands are only *defined* here; registering them with Discord is explicit
(``python -m bot sync-commands [--guild ID]``), never on start.
"""

from __future__ import annotations

from typing import Protocol

import discord
from discord import app_commands

from adapters.discord.autocomplete import gpu_choices, model_choices
from adapters.discord.limits import MAX_MODEL_OPTION, MAX_OPTION_STRING
from adapters.discord.options import Options
from engine.specs import Catalog

COMMAND = "ftcost"
HELP_COMMAND = "ftcost-help"

METHOD_CHOICES = [
    app_commands.Choice(name="Full fine-tune", value="full"),
    app_commands.Choice(name="LoRA", value="lora"),
    app_commands.Choice(name="QLoRA", value="qlora"),
]
FRAMEWORK_CHOICES = [
    app_commands.Choice(name="Generic (the specification's assumptions)", value="generic"),
    app_commands.Choice(name="HF transformers / TRL / PEFT / axolotl", value="hf"),
    app_commands.Choice(name="Unsloth", value="unsloth"),
    app_commands.Choice(name="torchtune", value="torchtune"),
    app_commands.Choice(name="LitGPT", value="litgpt"),
    app_commands.Choice(name="torchtitan", value="torchtitan"),
]


class CommandHandler(Protocol):
    """What the commands call (the client)."""

    @property
    def catalog(self) -> Catalog: ...

    async def handle_ftcost(
        self,
        interaction: discord.Interaction,
        query: str,
        options: Options,
        config: discord.Attachment | None = None,
    ) -> None: ...

    async def handle_help(self, interaction: discord.Interaction) -> None: ...


def build_commands(handler: CommandHandler) -> list[app_commands.Command]:  # type: ignore[type-arg]
    """The commands, their callbacks bound to ``handler``."""

    @app_commands.command(
        name=COMMAND,
        description="What will this fine-tune cost? e.g. 70b qlora 50M tokens h100",
    )
    @app_commands.describe(
        query="The question, e.g. 70b qlora 50M tokens h100 (in a thread: what if 8k seq)",
        model="Model: a name, alias or size (70b)",
        gpu="Card, optionally with a count: h100, 8x a100",
        method="Training method",
        tokens="Dataset size in tokens: 50M, 1.2B",
        seq="Sequence length: 8k, 4096",
        epochs="Epochs over the dataset: 2, 0.5",
        framework="Training framework (default: this channel's, else generic)",
        config="Training config (axolotl, TRL, torchtune, LLaMA-Factory; YAML/JSON, max 64 KB)",
    )
    @app_commands.choices(method=METHOD_CHOICES, framework=FRAMEWORK_CHOICES)
    async def ftcost(
        interaction: discord.Interaction,
        query: app_commands.Range[str, 1, MAX_OPTION_STRING] | None = None,
        model: app_commands.Range[str, 1, MAX_MODEL_OPTION] | None = None,
        gpu: app_commands.Range[str, 1, 100] | None = None,
        method: app_commands.Choice[str] | None = None,
        tokens: app_commands.Range[str, 1, 40] | None = None,
        seq: app_commands.Range[str, 1, 40] | None = None,
        epochs: float | None = None,
        framework: app_commands.Choice[str] | None = None,
        config: discord.Attachment | None = None,
    ) -> None:
        options = Options(
            model=model,
            gpu=gpu,
            method=method.value if method is not None else None,
            tokens=tokens,
            seq=seq,
            epochs=epochs,
            framework=framework.value if framework is not None else None,
        )
        await handler.handle_ftcost(interaction, query or "", options, config)

    @ftcost.autocomplete("model")
    async def model_autocomplete(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return [
            app_commands.Choice(name=p.name, value=p.value)
            for p in model_choices(handler.catalog, current)
        ]

    @ftcost.autocomplete("gpu")
    async def gpu_autocomplete(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return [
            app_commands.Choice(name=p.name, value=p.value)
            for p in gpu_choices(handler.catalog, current)
        ]

    @app_commands.command(name=HELP_COMMAND, description="How to ask ftcost: the query language")
    async def ftcost_help(interaction: discord.Interaction) -> None:
        await handler.handle_help(interaction)

    return [ftcost, ftcost_help]
