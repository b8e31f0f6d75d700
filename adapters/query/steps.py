"""A run counted in optimizer steps (``1000 steps``, HF's ``max_steps``): the tokens it
computes, steps x micro-batch x accumulation x cards x sequence, every position of every
sequence a step runs (padding too).

``steps`` is a :class:`~engine.request.Request` field, so a follow-up or a config that
changes the batch, the accumulation, the cards or the sequence recounts the tokens; the
estimate itself reads only ``dataset_tokens``.
"""

from __future__ import annotations

from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.fields import out_of_range
from engine.constants import MAX_DATASET_TOKENS
from engine.request import Request, Solve

STEPS_EXAMPLE: Final = "8b lora 1000 steps bs 8 seq 2048 4x a100"
OTHER_LENGTHS: Final = ("dataset_tokens", "samples", "epochs")
"""The other ways to say how long a run is; one query says one."""
_FACTORS: Final = ("micro_batch", "grad_accum", "seq_len")
_SOLVED_FACTORS: Final = {
    Solve.MICRO_BATCH: "micro-batch",
    Solve.SEQ_LEN: "sequence length",
    Solve.GPU_COUNT: "card count",
}
"""Questions that solve for a factor of a step's tokens: steps cannot count those runs."""


def count_steps(fields: dict[str, object]) -> None:
    """Set ``fields["dataset_tokens"]`` from ``fields["steps"]``, in place, when steps
    are given, and the epochs to one: the steps are the whole run (a step budget overrides
    epochs, as HF's ``max_steps`` overrides ``num_train_epochs``, and the default of 3
    epochs does not apply). QueryError without a card count, or when the tokens pass their
    bound."""
    steps = fields.get("steps")
    if not isinstance(steps, int):
        return
    said = f"{steps:,} steps"
    solve = fields.get("solve")
    if solve in _SOLVED_FACTORS:
        raise error(
            f'"{said}" counts tokens from the {_SOLVED_FACTORS[solve]}, which this question '
            "solves for: give the run in tokens instead (\"16M tokens\").", said,
            example="max batch 8b lora 16M tokens 4x a100",
        )
    count = fields.get("gpu_count")
    if not isinstance(count, int):
        raise error(
            f'"{said}": steps need the number of cards to give the tokens (steps x batch x '
            'accumulation x cards x sequence): name them ("4x a100"), or say the tokens '
            '("16M tokens").', said, example=STEPS_EXAMPLE,
        )
    tokens = steps * count
    for name in _FACTORS:
        value = fields.get(name)
        tokens *= value if isinstance(value, int) else Request.model_fields[name].default
    if tokens > MAX_DATASET_TOKENS:
        raise out_of_range("dataset_tokens", said)
    fields["dataset_tokens"] = tokens
    fields["epochs"] = 1.0


def check_one_length(fields: dict[str, object], sources: dict[str, str]) -> None:
    """Refuse a query that gives steps and another length of the run (tokens, samples,
    epochs) together."""
    if "steps" not in fields:
        return
    other = next((f for f in OTHER_LENGTHS if f in fields), None)
    if other is not None:
        raise error(
            f'Give the run\'s length once: "{quoted(sources["steps"])}" or '
            f'"{quoted(sources.get(other, other))}", not both.',
            sources["steps"], example=STEPS_EXAMPLE,
        )
