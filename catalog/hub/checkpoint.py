"""Parameter counts read from a checkpoint's safetensors metadata (pure, no I/O).

Two sources, as the Hub's own tools use them:

* ``model.safetensors.index.json`` (sharded checkpoints): ``metadata.total_size`` is
  the bytes of every tensor; divided by the bytes per value of ``torch_dtype`` it is the
  parameter count (exact for a checkpoint stored in one dtype).
* the header of a single ``model.safetensors``: the first 8 bytes are the header's
  length as a little-endian unsigned 64-bit integer, then that many bytes of JSON,
  ``{tensor name: {"dtype", "shape", "data_offsets"}, "__metadata__": {...}}``; the sum
  over tensors of the product of the shape is the exact parameter count
  (https://github.com/huggingface/safetensors#format).

When the config ties the LM head to the embedding but the checkpoint also stores
``lm_head.weight``, that duplicate (``vocab_size x hidden_size``) is taken out, so a
tied model is compared with what it really trains.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any, Final

from catalog.echo import one_line
from catalog.hub.bounds import MAX_PARAMS
from catalog.hub.errors import shown
from engine.architecture import Architecture

DTYPE_BYTES: Final[dict[str, float]] = {
    "float32": 4,
    "float": 4,
    "float64": 8,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}
"""Bytes per value of the dtypes ``config.json`` names in ``torch_dtype``."""

_MAX_DIGITS: Final = 30
"""A ``total_size`` string longer than this is no byte count (and int() of 4,300+
digits raises)."""
HEADER_PREFIX_BYTES: Final = 8
MAX_HEADER_BYTES: Final = 16 * 1024 * 1024
"""Headers larger than this are not fetched (a few hundred KB is typical)."""
TIED_HEAD: Final = "lm_head.weight"


@dataclass(frozen=True, slots=True)
class Count:
    """A parameter count read from the checkpoint and how it was read."""

    params: int
    source: str


class CheckpointFormatError(ValueError):
    """The index or header is not what the safetensors format says (message: why)."""


def _tied_duplicate(names: Any, arch: Architecture) -> int:
    """Elements of a stored ``lm_head.weight`` that the config ties to the embedding."""
    if arch.tie_embeddings and TIED_HEAD in names:
        return arch.vocab_size * arch.hidden_size
    return 0


def count_from_index(index: Any, dtype: str | None, arch: Architecture) -> Count:
    """Parameters from a parsed ``model.safetensors.index.json``."""
    if not isinstance(index, dict) or not isinstance(index.get("metadata"), dict):
        raise CheckpointFormatError("model.safetensors.index.json has no metadata object")
    total = index["metadata"].get("total_size")
    if isinstance(total, str) and total.isdigit() and len(total) <= _MAX_DIGITS:
        total = int(total)
    if isinstance(total, bool) or not isinstance(total, int | float) or not total > 0:
        raise CheckpointFormatError(
            f"model.safetensors.index.json has no total_size (found {one_line(shown(total))})"
        )
    if dtype is None or dtype not in DTYPE_BYTES:
        raise CheckpointFormatError(
            f"config.json names no dtype ftcost knows ({one_line(dtype or 'none')}) to turn "
            "total_size into a parameter count"
        )
    per = DTYPE_BYTES[dtype]
    if not total <= MAX_PARAMS * per:  # also refuses inf; checked before any division
        raise CheckpointFormatError(
            f"model.safetensors.index.json: total_size {shown(total)} B is more than any "
            f"real checkpoint holds (ftcost accepts up to {MAX_PARAMS * per:,.0f} B)"
        )
    params = round(total / per)
    weight_map = index.get("weight_map")
    dup = _tied_duplicate(weight_map if isinstance(weight_map, dict) else {}, arch)
    source = (
        f"model.safetensors.index.json: total_size {int(total):,} B / {per:g} B "
        f"({dtype})"
    )
    if dup:
        source += ", less the stored copy of the tied lm_head"
    return Count(params - dup, source)


def header_length(prefix: bytes) -> int:
    """The JSON header's length from the first 8 bytes of a ``.safetensors`` file."""
    if len(prefix) < HEADER_PREFIX_BYTES:
        raise CheckpointFormatError("model.safetensors is shorter than 8 bytes")
    (length,) = struct.unpack("<Q", prefix[:HEADER_PREFIX_BYTES])
    if length <= 1:
        raise CheckpointFormatError("model.safetensors declares an empty header")
    if length > MAX_HEADER_BYTES:
        raise CheckpointFormatError(
            f"model.safetensors declares a {length:,}-byte header (larger than "
            f"{MAX_HEADER_BYTES:,} B); not read"
        )
    return int(length)


def _bounded_product(shape: list[int]) -> int:
    """The elements of a tensor of ``shape``, or ``MAX_PARAMS + 1`` as soon as the running
    product passes :data:`~catalog.hub.bounds.MAX_PARAMS` (no huge integers built)."""
    out = 1
    for d in shape:
        if d == 0:
            return 0
        out *= d
        if out > MAX_PARAMS:
            return MAX_PARAMS + 1
    return out


def count_from_header(header: bytes, arch: Architecture) -> Count:
    """Parameters from a ``model.safetensors`` JSON header (exact: shapes summed)."""
    try:
        doc = json.loads(header.decode("utf-8"))
    except ValueError as exc:  # not UTF-8, not JSON, or an int over 4,300 digits
        raise CheckpointFormatError(
            f"model.safetensors header is not JSON ({one_line(str(exc))})"
        ) from exc
    if not isinstance(doc, dict):
        raise CheckpointFormatError("model.safetensors header is not a JSON object")
    total = 0
    tensors = 0
    for name, info in doc.items():
        if name == "__metadata__":
            continue
        shape = info.get("shape") if isinstance(info, dict) else None
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
        ):
            raise CheckpointFormatError(
                f"model.safetensors tensor {one_line(repr(name))} has no valid shape"
            )
        total += _bounded_product(shape)
        if total > MAX_PARAMS:
            raise CheckpointFormatError(
                f"model.safetensors header: tensor {one_line(repr(name))} takes the total past "
                f"{MAX_PARAMS:,} parameters, more than any real model has"
            )
        tensors += 1
    if not tensors:
        raise CheckpointFormatError("model.safetensors header lists no tensors")
    dup = _tied_duplicate(doc, arch)
    source = f"model.safetensors header: {tensors:,} tensors, shapes summed"
    if dup:
        source += ", less the stored copy of the tied lm_head"
    return Count(total - dup, source)
