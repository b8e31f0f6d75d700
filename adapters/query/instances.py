"""Cloud instance types as cards: ``p4d.24xlarge`` is 8 A100 40GB in one node.

People who rent by the instance name the instance, not the card: ``8b lora on a
g5.2xlarge``, ``ml.p4d.24xlarge`` (SageMaker), ``a2-highgpu-8g``, ``ND96asr_v4``,
``gpu_8x_h100_sxm5``. The catalog lists each card's instance types and how many cards
each carries (:attr:`engine.specs.GpuSpec.instances`).

Two steps, so that a number is only ever read once, by the rule that owns it:

* the tokenizer (:func:`adapters.query.tokenizer.mark_instances`) turns a named
  instance into one marked word and drops the words that only introduce it
  (``--instance_type``) or name its cloud (``aws``, ``sagemaker``: the instance says
  which);
* the scanner (:func:`instance`) reads that word left to right with the rest, so ``fsdp
  8 p4d.24xlarge`` and ``steps 500 p4d.24xlarge`` keep their numbers, and ``2x
  p4d.24xlarge``, ``2 p4d.24xlarge instances``, ``p4d.24xlarge x2`` or ``p4d.24xlarge 2
  nodes`` are two nodes of 8.

The price stays the catalog's for the card (the clouds' median), per GPU-hour; a rate
said beside an instance that can only be the instance's is refused with its per-GPU
share (:func:`check_instance_rate`).
"""

from __future__ import annotations

import re
from typing import Final

from adapters.query.errors import QueryError, error, quoted
from adapters.query.state import State
from adapters.query.tokenizer import INSTANCE_MARK

_AFTER: Final = frozenset(
    {"instance", "instances", "node", "nodes", "machine", "machines", "vm", "vms", "box"}
)
"""A word after an instance type that says nothing more (``2 p4d.24xlarge instances``)."""
_COUNTING: Final = frozenset({"node", "nodes", "machine", "machines", "vm", "vms"})
"""After an instance and a number, the words that make the number its count
(``p4d.24xlarge 2 nodes``); ``instances`` is not one, as ``5000 instances of 512
tokens`` counts samples."""
_COUNT: Final = re.compile(r"^([0-9]+)x?$")
_TRAILING: Final = re.compile(r"^[x*]([0-9]+)$")
RATE_FACTOR: Final = 4.0
"""A rate said beside a multi-card instance above this many times the card's catalog
price, whose per-card share is still a plausible price, is the instance's rate."""


def _found(s: State, i: int) -> tuple[str, int] | None:
    low = s.low(i)
    return (s.catalog.find_instance(low[len(INSTANCE_MARK):]) if low.startswith(INSTANCE_MARK)
            else None)


def _leading(s: State, i: int) -> tuple[int | None, int]:
    """``(machines, index of the instance)`` for a count before an instance at ``i``
    (``2x p4d``, ``2 p4d``, ``2 x p4d``), else ``(None, i)``."""
    count = _COUNT.match(s.low(i))
    if count is None:
        return None, i
    j = i + 1 + (s.low(i + 1) in ("x", "*"))
    return (int(count.group(1)), j) if _found(s, j) else (None, i)


def _trailing(s: State, j: int) -> tuple[int | None, int]:
    """``(machines, words)`` of a count after the instance at ``j - 1`` (``x2``, ``x 2``,
    ``2 nodes``), else ``(None, 0)``."""
    if found := _TRAILING.match(s.low(j)):
        return int(found.group(1)), 1
    if s.low(j) in ("x", "*") and _COUNT.match(s.low(j + 1)):
        return int(s.low(j + 1).rstrip("x")), 2
    if (count := _COUNT.match(s.low(j))) and s.low(j + 1) in _COUNTING:
        return int(count.group(1)), 2
    return None, 0


def instance(s: State, i: int) -> int:
    """An instance type at ``i``, or a count of them starting there: the card, its count
    and, for a count of instances (or a single instance of no more than a node), the
    nodes."""
    machines, j = _leading(s, i)
    found = _found(s, j)
    if found is None:
        return 0
    card, per_instance = found
    end = j + 1
    if machines is None:
        machines, n = _trailing(s, end)
        end += n
    end += s.low(end) in _AFTER
    said, name = s.raw(i, end - i), s.raw(j)
    count_word = s.raw(i) if j > i else name
    s.set("gpu", card, said, name)
    if machines is not None:
        s.set("nodes", machines, said, count_word)
    s.set("gpu_count", (machines or 1) * per_instance, said, count_word)
    s.instance = (name, per_instance, machines is not None)
    return end - i


def check_instance(s: State) -> None:
    """Settle an instance named without a count of them, once every word is read: nodes
    said elsewhere count instances (``--nnodes 2 p4d.24xlarge``, ``2 nodes p4d.24xlarge``:
    16 cards); else it is one machine (so a follow-up that names one leaves the thread's
    nodes behind), where the card's machines hold that many. Then the rate beside it
    (:func:`check_instance_rate`)."""
    if s.instance is None:
        return
    name, per, counted = s.instance
    nodes, card = s.fields.get("nodes"), s.fields.get("gpu")
    if not counted and isinstance(nodes, int):
        s.fields.pop("gpu_count")
        s.set("gpu_count", nodes * per, s.sources.pop("gpu_count"))
    elif not counted and isinstance(card, str) and per <= s.catalog.gpu(card).gpus_per_node:
        s.set("nodes", 1, s.sources["gpu"], name)
    check_instance_rate(s)


def check_instance_rate(s: State) -> None:
    """Refuse a ``$X/hr`` beside a multi-card instance that can only be the instance's
    rate: above :data:`RATE_FACTOR` times the card's catalog price while its share per
    card is still at least half of it (``p4d.24xlarge $32.77/hr``, AWS's on-demand rate
    for 8 A100s, is $4.10 a card)."""
    rate, card = s.fields.get("price_per_gpu_hour"), s.fields.get("gpu")
    if s.instance is None or not isinstance(rate, float) or not isinstance(card, str):
        return
    name, per, _ = s.instance
    listed = s.catalog.gpu(card).price_per_gpu_hour
    if per < 2 or listed is None or rate <= RATE_FACTOR * listed or rate / per < listed / 2:
        return
    said = s.sources["price_per_gpu_hour"]
    raise error(f'"{quoted(said)}" is a rate per GPU-hour, and {quoted(name)} has {per} cards: '
                f"at that rate it costs ${rate * per:,.2f} an hour. For the instance's rate, "
                f'say "${rate / per:.2f}/hr" (${rate:g} / {per}).', said,
                example=f"70b full {name} ${rate / per:.2f}/hr")


_INSTANCE_LIKE: Final = re.compile(
    r"^(?:ml\.)?[a-z]+[0-9][a-z0-9-]*\.(?:metal|[0-9]*xlarge)$"  # AWS: g6.4xlarge
    r"|^[a-z][0-9]-(?:highgpu|megagpu|ultragpu|standard|edgegpu)-[0-9]+g?$"  # GCP
    r"|^(?:standard-)?n[cdv][0-9]+[a-z0-9-]*-v[0-9]+$"  # Azure: Standard_NC24ads_A100_v4
    r"|^gpu-[0-9]+x-[a-z0-9-]+$"  # Lambda: gpu_8x_h100_sxm5
)
"""Words shaped like a cloud instance type (lower case, ``_`` read as ``-``)."""


def unknown_instance(s: State, i: int) -> QueryError | None:
    """A refusal for a word shaped like an instance type the catalog does not list
    (``g6.4xlarge``): name its cards instead. None for any other word."""
    word = s.raw(i)
    if not _INSTANCE_LIKE.match(s.low(i)):
        return None
    return error(f'"{quoted(word)}" looks like a cloud instance type the catalog does not list: '
                 'name its cards instead, e.g. "4x l4" or "8x h100".', word,
                 example="8b lora 4x l4 50M tokens")
