"""Typed, bounded reads from a ``config.json``, shared by every family reader.

:class:`Fields` reads one config object (or a nested ``text_config``): each number is
checked against its bound (:func:`~catalog.hub.bounds.bound_for`) before anything uses
it, and each error names the model and the field. :func:`decoder_fields` and
:func:`attention_bias` read the fields most decoders share under their transformers
names. The readers themselves live in :mod:`catalog.hub.families` (current decoders)
and :mod:`catalog.hub.families_classic` (GPT-2-era and plain-MLP families).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from typing import Any, Final

from catalog.echo import one_line
from catalog.hub.bounds import MAX_LIST_ITEMS, bound_for
from catalog.hub.errors import HubError, HubErrorKind, shown
from catalog.hub.ref import HubRef

CORE_FIELDS: Final = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
)
"""The sizes every current decoder's ``config.json`` names the same way."""

Read = tuple[dict[str, Any], tuple[str, ...]]
"""A reader's answer: :class:`~engine.architecture.Architecture` fields, and notes."""


class Fields:
    """Typed reads from one config object, each error naming the field."""

    def __init__(
        self,
        config: Mapping[str, Any],
        ref: HubRef,
        where: str = "config.json",
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self.config = config
        self.ref = ref
        self.where = where
        self.defaults = defaults or {}
        self.defaulted: list[str] = []

    def get(self, name: str) -> Any:
        value = self.config.get(name)
        if value is None and name in self.defaults:
            if name not in self.defaulted:
                self.defaulted.append(name)
            return self.defaults[name]
        return value

    def require(self, family: str, *names: str) -> None:
        missing = [n for n in names if self.get(n) is None]
        if missing:
            raise HubError(
                HubErrorKind.MISSING_FIELDS,
                f"{self.where} of {self.ref.id} lacks {', '.join(missing)}, which a "
                f"{family} model needs to be sized. It may not be a complete transformers "
                "checkpoint; point at the original model's repository, or pick a catalog "
                "model of the same size (`models` lists them).",
                self.ref.id,
            )

    def _bad(self, name: str, value: Any, wanted: str) -> HubError:
        return HubError(
            HubErrorKind.MALFORMED,
            f"{self.where} of {self.ref.id}: {name} must be {wanted}, not "
            f"{one_line(repr(value) if isinstance(value, str) else shown(value))}. "
            "The config looks broken; try another revision (org/name@rev) or the original "
            "repository.",
            self.ref.id,
        )

    def _too_large(self, name: str, value: Any, bound: builtins.int) -> HubError:
        return HubError(
            HubErrorKind.TOO_LARGE,
            f"{self.where} of {self.ref.id}: {name} is {shown(value)}, more than any real "
            f"model has (ftcost accepts up to {bound:,}). The config is broken or not a "
            "real model; try another revision (org/name@rev) or the original repository.",
            self.ref.id,
        )

    def either(self, *names: str) -> str:
        """The first of ``names`` the config sets (the first when it sets none), for a
        size transformers reads under more than one name (BLOOM: ``hidden_size`` or the
        older ``n_embed``). The value is then read, and bounded, under that name."""
        return next((n for n in names if self.get(n) is not None), names[0])

    def int(self, name: str, default: int | None = None, minimum: int = 1) -> int | None:
        """A whole number between ``minimum`` and the field's bound
        (:func:`~catalog.hub.bounds.bound_for`), checked before anything uses it."""
        value = self.get(name)
        if value is None:
            return default
        if isinstance(value, float) and value.is_integer():
            if value > bound_for(name):
                raise self._too_large(name, value, bound_for(name))
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self._bad(name, value, f"a whole number of at least {minimum}")
        if value > bound_for(name):
            raise self._too_large(name, value, bound_for(name))
        return value

    # After `def int` the class body's `int` is that method: annotations say builtins.int.
    def need(self, name: str, minimum: builtins.int = 1) -> builtins.int:
        value = self.int(name, minimum=minimum)
        if value is None:  # require() ran first; kept for a clear error all the same
            raise self._bad(name, value, "present")
        return value

    def bool(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._bad(name, value, "true or false")
        return value

    def int_list(self, name: str) -> list[builtins.int]:
        value = self.get(name)
        if value is None:
            return []
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise self._bad(name, value, "a list of layer numbers")
        if len(value) > MAX_LIST_ITEMS:
            raise self._too_large(f"the length of {name}", len(value), MAX_LIST_ITEMS)
        return list(value)

    def text(self, name: str) -> str | None:
        value = self.get(name)
        return value if isinstance(value, str) else None


def decoder_fields(
    f: Fields,
    *,
    tie_default: bool,
    head_dim_default: int | None = None,
) -> dict[str, Any]:
    """The fields every decoder has: widths, depth, heads, vocabulary, tying."""
    heads = f.need("num_attention_heads")
    out: dict[str, Any] = {
        "hidden_size": f.need("hidden_size"),
        "num_layers": f.need("num_hidden_layers"),
        "num_heads": heads,
        "num_kv_heads": f.int("num_key_value_heads", default=heads),
        "intermediate_size": f.need("intermediate_size"),
        "vocab_size": f.need("vocab_size"),
        "tie_embeddings": f.bool("tie_word_embeddings", tie_default),
    }
    head_dim = f.int("head_dim", default=head_dim_default)
    if head_dim is not None:
        out["head_dim"] = head_dim
    return out


def attention_bias(f: Fields) -> dict[str, bool]:
    """``attention_bias`` puts a bias on q, k, v and o (Llama, Qwen3, Gemma, OLMo 2)."""
    bias = f.bool("attention_bias", False)
    return {"qkv_bias": bias, "o_bias": bias}


FamilyReader = Callable[[Fields], Read]
"""Reads one family's config into :data:`Read`."""
