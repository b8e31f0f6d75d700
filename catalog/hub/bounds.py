"""Sizes no real model reaches: every number read from the Hub is checked against these
before it is used, so a hostile or broken ``config.json`` cannot make the bot loop over
a hundred million layers or overflow a float.

Each bound is far above the largest released model (the figures in the comments are
from those models' ``config.json`` on the Hub) and far below anything that costs real
time or memory to compute with. A config over a bound is refused with a message naming
the model, the field and the bound, and that answer is cached like any other broken
config (:attr:`~catalog.hub.errors.HubErrorKind.TOO_LARGE`).

The same bounds hold for a model read back from the resolver's cache
(:func:`architecture_problem`): :data:`ARCHITECTURE_BOUNDS`, :data:`MOE_BOUNDS` and
:data:`MLA_BOUNDS` give each size of the resolved architecture the bound of the
``config.json`` field it was read from.
"""

from __future__ import annotations

from typing import Final

from catalog.echo import shown
from engine.architecture import Architecture

MAX_LAYERS: Final = 1_000
"""Decoder layers. Largest released: Llama 3.1 405B, 126."""
MAX_HIDDEN: Final = 131_072
"""``hidden_size``. Largest released: Llama 3.1 405B, 16,384."""
MAX_INTERMEDIATE: Final = 1_048_576
"""MLP and expert widths. Largest released: Llama 3.1 405B, 53,248."""
MAX_HEADS: Final = 4_096
"""Attention heads (query or key/value). Largest released: 128 (Llama 3.1 405B,
DeepSeek-V3)."""
MAX_HEAD_DIM: Final = 16_384
"""Per-head widths and MLA ranks. Largest released: DeepSeek-V3's ``q_lora_rank``, 1,536."""
MAX_EXPERTS: Final = 16_384
"""Routed or shared experts per layer. Largest released: Qwen3-Next, 512."""
MAX_VOCAB: Final = 4_194_304
"""``vocab_size``. Largest released: Gemma 3, 262,208."""
MAX_POSITIONS: Final = 16_777_216
"""Context lengths and rows of a learned position table. Largest released context:
Llama 4 Scout, 10,485,760; largest learned table: OPT, 2,050."""
MAX_OTHER_INT: Final = 1_000_000
"""Any other whole number ftcost reads from a config (steps, layer numbers)."""
MAX_PARAMS: Final = 10**14
"""Total parameters (100 T), derived or read from a checkpoint. Largest released:
Kimi K2, about 1.04 T."""
MAX_LIST_ITEMS: Final = MAX_LAYERS
"""Entries of a per-layer list such as ``mlp_only_layers``."""

FIELD_BOUNDS: Final[dict[str, int]] = {
    "num_hidden_layers": MAX_LAYERS,
    "hidden_size": MAX_HIDDEN,
    "intermediate_size": MAX_INTERMEDIATE,
    "moe_intermediate_size": MAX_INTERMEDIATE,
    "shared_expert_intermediate_size": MAX_INTERMEDIATE,
    "num_attention_heads": MAX_HEADS,
    "num_key_value_heads": MAX_HEADS,
    "head_dim": MAX_HEAD_DIM,
    "q_lora_rank": MAX_HEAD_DIM,
    "kv_lora_rank": MAX_HEAD_DIM,
    "qk_nope_head_dim": MAX_HEAD_DIM,
    "qk_rope_head_dim": MAX_HEAD_DIM,
    "v_head_dim": MAX_HEAD_DIM,
    "num_experts": MAX_EXPERTS,
    "num_local_experts": MAX_EXPERTS,
    "n_routed_experts": MAX_EXPERTS,
    "n_shared_experts": MAX_EXPERTS,
    "num_experts_per_tok": MAX_EXPERTS,
    "experts_per_token": MAX_EXPERTS,
    "vocab_size": MAX_VOCAB,
    "first_k_dense_replace": MAX_LAYERS,
    "num_nextn_predict_layers": MAX_LAYERS,
    # the same sizes under older families' names (GPT-2, GPT-J, BLOOM, OPT, Falcon)
    "n_layer": MAX_LAYERS,
    "n_embd": MAX_HIDDEN,
    "n_embed": MAX_HIDDEN,
    "word_embed_proj_dim": MAX_HIDDEN,
    "n_head": MAX_HEADS,
    "num_kv_heads": MAX_HEADS,
    "n_inner": MAX_INTERMEDIATE,
    "ffn_dim": MAX_INTERMEDIATE,
    "ffn_hidden_size": MAX_INTERMEDIATE,
    "n_positions": MAX_POSITIONS,
    "max_position_embeddings": MAX_POSITIONS,
}
"""The bound of each ``config.json`` field; :data:`MAX_OTHER_INT` for the rest."""


def bound_for(field: str) -> int:
    """The largest value ftcost accepts for ``config.json``'s ``field``."""
    return FIELD_BOUNDS.get(field, MAX_OTHER_INT)


MAX_LEARNED_POSITIONS: Final = MAX_POSITIONS + 1_024
"""Rows of a resolved learned position table: a context of :data:`MAX_POSITIONS` plus
the offset rows a family adds to it (OPT: 2)."""

ARCHITECTURE_BOUNDS: Final[dict[str, int]] = {
    "hidden_size": MAX_HIDDEN,
    "num_layers": MAX_LAYERS,
    "num_heads": MAX_HEADS,
    "num_kv_heads": MAX_HEADS,
    "head_dim": MAX_HEAD_DIM,
    "intermediate_size": MAX_INTERMEDIATE,
    "vocab_size": MAX_VOCAB,
    "learned_positions": MAX_LEARNED_POSITIONS,
    "norms_per_layer": MAX_OTHER_INT,
}
"""The bound of each whole-number field of :class:`~engine.architecture.Architecture`
(the bound of the ``config.json`` field it is read from; 4 x ``n_embd``, the default MLP
width of the older families, stays within :data:`MAX_INTERMEDIATE`)."""
MOE_BOUNDS: Final[dict[str, int]] = {
    "num_experts": MAX_EXPERTS,
    "experts_per_token": MAX_EXPERTS,
    "expert_intermediate_size": MAX_INTERMEDIATE,
    "num_shared_experts": MAX_EXPERTS,
    "shared_intermediate_size": MAX_INTERMEDIATE,
    "first_dense_layers": MAX_LAYERS,
}
"""The bound of each whole-number field of :class:`~engine.architecture.MoE`."""
MLA_BOUNDS: Final[dict[str, int]] = {
    "q_lora_rank": MAX_HEAD_DIM,
    "kv_lora_rank": MAX_HEAD_DIM,
    "qk_nope_head_dim": MAX_HEAD_DIM,
    "qk_rope_head_dim": MAX_HEAD_DIM,
    "v_head_dim": MAX_HEAD_DIM,
}
"""The bound of each whole-number field of :class:`~engine.architecture.MLA`."""


def architecture_problem(arch: Architecture) -> str | None:
    """What makes ``arch`` a model no fresh read of a ``config.json`` gives (a size past
    its bound, or more than :data:`MAX_PARAMS` parameters in all), in a few words for a
    log line; None when it is within every bound. The sizes are checked before the
    parameter count, which is only computed from bounded sizes."""
    parts = (("", arch, ARCHITECTURE_BOUNDS), ("moe.", arch.moe, MOE_BOUNDS),
             ("mla.", arch.mla, MLA_BOUNDS))
    for prefix, part, bounds in parts:
        for name, bound in bounds.items():
            value = getattr(part, name) if part is not None else None
            if value is not None and value > bound:
                return f"{prefix}{name} is {shown(value)}, over {bound:,}"
    if arch.total_params > MAX_PARAMS:
        return f"{arch.total_params:,} parameters, over {MAX_PARAMS:,}"
    return None
