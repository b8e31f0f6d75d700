"""Cloud instance types as cards: ``p4d.24xlarge`` is ``8x a100-40gb-sxm``.

People who rent by the instance name the instance, not the card: ``8b lora on a
g5.2xlarge``, ``ml.p4d.24xlarge`` (SageMaker), ``a2-highgpu-8g``, ``ND96asr_v4``,
``gpu_8x_h100_sxm5``. The catalog lists each card's instance types and how many cards
each carries (:attr:`engine.specs.GpuSpec.instances`); here a named one becomes the words
the parser already reads:

* ``p4d.24xlarge`` → ``8x a100-40gb-sxm``: one instance;
* ``2x p4d.24xlarge``, ``2 p4d.24xlarge``, ``p4d.24xlarge x2``, ``p4d.24xlarge 2 nodes``
  → ``2x8 a100-40gb-sxm``: two instances of 8 cards, each a node (the grid form);
* a cloud's name (``aws``, ``sagemaker``) and a word such as ``instance`` or
  ``instance_type`` beside it say nothing more and are dropped.

The price stays the catalog's for the card (the clouds' median); the instance only
names the cards.
"""

from __future__ import annotations

import re
from typing import Final

from adapters.query.numbers import ALL_UNITS
from engine.specs import Catalog

CLOUD_WORDS: Final = frozenset(
    {"aws", "ec2", "amazon", "sagemaker", "gcp", "google", "azure", "lambda", "lambdalabs"}
)
"""Clouds' names, which an instance type already implies (alone they are refused: a card
is priced at the clouds' median, not one cloud's)."""
_KEY_WORDS: Final = frozenset({"instance-type", "instance", "machine-type", "vm-size", "vm"})
"""A word that introduces an instance type (``--instance_type ml.g5.2xlarge``)."""
_UNIT_WORDS: Final = frozenset(
    {"instance", "instances", "node", "nodes", "machine", "machines", "vm", "vms"}
)
"""A word after an instance type (or after its count) that counts instances."""
_COUNT: Final = re.compile(r"^([0-9]+)x?$")
_TRAILING_COUNT: Final = re.compile(r"^[x*]([0-9]+)$")


def _count(word: str, pattern: re.Pattern[str]) -> int | None:
    found = pattern.match(word)
    return int(found.group(1)) if found and not found.group(1).startswith("0") else None


def read_instances(words: list[tuple[str, str]], catalog: Catalog) -> list[tuple[str, str]]:
    """``words`` (raw, low) with every instance type read as its cards (see the module);
    ``words`` itself when none is named."""
    named = [catalog.find_instance(low) for _, low in words]
    if not any(named):
        return words
    out: list[tuple[str, str]] = []
    k = 0
    while k < len(words):
        raw, low = words[k]
        found = named[k]
        k += 1
        if found is None:
            if low not in CLOUD_WORDS:
                out.append((raw, low))
            continue
        while out and out[-1][1] in _KEY_WORDS | CLOUD_WORDS:
            out.pop()
        card, per_instance = found
        machines = None
        if out and out[-1][1] == "x" and len(out) > 1:  # "2 x p4d.24xlarge"
            machines = _count(out[-2][1], _COUNT)
            if machines:
                out.pop()
        if machines is None and out and not (len(out) > 1 and out[-2][1] in ALL_UNITS):
            machines = _count(out[-1][1], _COUNT)  # "2 p4d.24xlarge", not "bs 4 p4d..."
        if machines:
            out.pop()
        elif k < len(words) and (after := _count(words[k][1], _TRAILING_COUNT)):
            machines, k = after, k + 1  # "p4d.24xlarge x2"
        elif k + 1 < len(words) and words[k + 1][1] in _UNIT_WORDS and (
            after := _count(words[k][1], _COUNT)
        ):
            machines, k = after, k + 2  # "p4d.24xlarge 2 nodes"
        if k < len(words) and words[k][1] in _UNIT_WORDS:
            k += 1  # "2 p4d.24xlarge instances"
        cards = f"{machines}x{per_instance}" if machines else f"{per_instance}x"
        out += [(raw, cards), (raw, card)]
    return out
