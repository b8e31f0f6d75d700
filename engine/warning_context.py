"""What the warnings, assumptions and notes of one estimate read (:mod:`engine.warnings`,
:mod:`engine.assumptions`, :mod:`engine.card_tips`): the resolved request, its model,
memory, card choices and compute."""

from __future__ import annotations

from dataclasses import dataclass

from engine.collectives import hsdp_group
from engine.compute import Compute
from engine.fit import Option, priced_option
from engine.memory import Footprint
from engine.profiles import changes_for
from engine.request import Request
from engine.specs import ModelSpec


@dataclass(frozen=True, slots=True)
class Context:
    """One estimate, as its caveats read it."""

    request: Request
    model: ModelSpec
    footprint: Footprint
    options: list[Option]
    compute: Compute
    mfu_effective: float
    fits_anywhere: bool
    framework_changes: tuple[str, ...] = ()
    """The profile's facts that touch this run on the card choice shown
    (:func:`changes_on_lead`)."""

    @property
    def lead(self) -> Option | None:
        """The reply's own option (the headline's card choice), None when nothing fits."""
        return self.options[0] if self.options else None

    @property
    def priced(self) -> Option | None:
        """The option the reply's time and cost are for (:func:`engine.fit.priced_option`):
        the lead, or the count of its card that holds the run."""
        return priced_option(self.options)

    @property
    def hsdp_group_cards(self) -> int:
        """Cards in one ``hsdp`` shard group of the card choice shown
        (:func:`engine.collectives.hsdp_group`)."""
        lead = self.lead
        if lead is None:
            return self.footprint.node_cards
        fp = self.footprint.on_card(lead.gpu.gpus_per_node)
        return hsdp_group(lead.count, fp.node_cards, fp.nodes)


def changes_on_lead(
    request: Request, model: ModelSpec, footprint: Footprint, lead: Option | None
) -> tuple[str, ...]:
    """The framework profile's facts that touch ``request`` on the card choice ``lead``
    (:func:`engine.profiles.changes_for`, with that choice's shard ranks)."""
    if lead is None:
        return tuple(changes_for(request, None, model.architecture))
    fp = footprint.on_card(lead.gpu.gpus_per_node)
    return tuple(changes_for(request, lead.stage, model.architecture,
                             fp.shard_ranks(lead.stage, lead.count)))
