"""Sizes no real model reaches: every number read from the Hub is checked against these
before it is used, so a hostile or broken ``config.json`` cannot make the bot loop over
a hundred million layers or overflow a float.

Each bound is far above the largest released model (the figures in the comments are
from those models' ``config.json`` on the Hub) and far below anything that costs real
time or memory to compute with. A config over a bound is refused with a message naming
the model, the field and the bound, and that answer is cached like any other broken
config (:attr:`~catalog.hub.errors.HubErrorKind.TOO_LARGE`).
"""

from __future__ import annotations

from typing import Final

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
