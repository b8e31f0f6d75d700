"""Settings a training framework refuses together, said as the run would be told: the
estimate still shows the numbers, and the reply says the run cannot start as asked and
what to change.

* Optimizer in backward with gradient accumulation: torchtune's recipes raise
  ``RuntimeError("Gradient accumulation is not supported with optimizer in bwd.")`` at
  start-up (``recipes/full_finetune_single_device.py`` and ``full_finetune_distributed.py``,
  ``_setup``); the step runs as each gradient is ready, so there is nothing to accumulate.
"""

from __future__ import annotations

from engine.warning_context import Context


def optimizer_in_backward_accumulation(ctx: Context) -> str | None:
    """The refusal of ``optimizer_in_backward`` beside ``grad_accum`` > 1, or None."""
    r = ctx.request
    if not r.optimizer_in_backward or r.grad_accum <= 1:
        return None
    return (
        f"Optimizer in backward steps each weight as its gradient is ready, so it cannot "
        f"accumulate {r.grad_accum} micro-batches (torchtune's recipes, where the switch "
        "comes from, refuse the pair at start-up: \"Gradient accumulation is not supported "
        "with optimizer in bwd\"). Take one micro-batch a step (`accum 1`, or a larger "
        "micro-batch for the same global batch), or drop `optimizer-in-backward`, which "
        "holds every gradient again."
    )


__all__ = ["optimizer_in_backward_accumulation"]
