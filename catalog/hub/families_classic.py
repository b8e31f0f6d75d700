"""``config.json`` to the engine's architecture for the older, plain-MLP families.

GPT-2, OPT, BLOOM, GPT-NeoX (Pythia, StableLM-alpha), GPT-J, Phi-1.5/2 and Falcon: a
LayerNorm decoder with a two-matrix GELU/ReLU MLP (``mlp: plain``), read the way their
entries in ``catalog/models.yaml`` were transcribed, so a fine-tune published under
another ``org/name`` gets the same parameter count as its catalog base. Several of
these configs name sizes the GPT-2 way (``n_embd``, ``n_layer``, ``n_head``); each is
bounded under the name it is read by (:mod:`catalog.hub.bounds`).

=============  ===================================================================
model_type     fields read (heads = key/value heads unless stated)
=============  ===================================================================
gpt2           n_embd, n_layer, n_head, n_inner (default 4 x n_embd), vocab_size,
               n_positions (learned position rows), tie_word_embeddings (default
               true); biases on every linear, two LayerNorms per layer
opt            hidden_size, num_hidden_layers, num_attention_heads, ffn_dim,
               vocab_size, max_position_embeddings (+ 2 offset rows, learned),
               enable_bias (default true), do_layer_norm_before (false: noted),
               tie_word_embeddings (default true); word_embed_proj_dim other than
               hidden_size (opt-350m's projected embeddings) is refused
bloom          hidden_size (or n_embed), n_layer, n_head, vocab_size; MLP of 4 x
               hidden, biases on every linear, ALiBi (no table), tied by default;
               word_embeddings_layernorm (2 x hidden) is not counted, as in the catalog
gpt_neox       hidden_size, num_hidden_layers, num_attention_heads,
               intermediate_size, vocab_size, attention_bias (default true),
               tie_word_embeddings (default false); MLP biases; two LayerNorms per
               layer whatever use_parallel_residual says (it rewires, adds nothing)
gptj           n_embd, n_layer, n_head, n_inner (default 4 x n_embd), vocab_size,
               tie_word_embeddings (default false); one LayerNorm per layer, no
               attention biases, MLP biases, LM head with a bias
phi            Phi-1.5 / Phi-2: hidden_size, num_hidden_layers, num_attention_heads,
               num_key_value_heads, intermediate_size, vocab_size,
               tie_word_embeddings (default false), qk_layernorm; one LayerNorm per
               layer, biases everywhere including the LM head
falcon         hidden_size, num_hidden_layers (or n_layer), num_attention_heads (or
               n_head), vocab_size, ffn_hidden_size (default 4 x hidden), bias,
               new_decoder_architecture (num_kv_heads), multi_query (one KV head),
               parallel_attn and num_ln_in_parallel_attn (LayerNorms per layer),
               tie_word_embeddings (default true); ALiBi or rotary, no table
=============  ===================================================================

``model_type: stablelm`` (StableLM-3B-4E1T, StableLM 2) is a different, gated-MLP
architecture with no catalog entry to check a reader against, so it is not read here;
StableLM-alpha checkpoints say ``gpt_neox`` and are.
"""

from __future__ import annotations

from typing import Any, Final

from catalog.hub.config_fields import CORE_FIELDS, FamilyReader, Fields, Read, decoder_fields
from catalog.hub.errors import HubError, HubErrorKind

OPT_POSITION_OFFSET: Final = 2
"""OPT's learned position table has ``max_position_embeddings + 2`` rows
(transformers' ``OPTLearnedPositionalEmbedding`` offsets positions by 2)."""

MLP_EXPANSION: Final = 4
"""The MLP width these families default to (or hard-code, BLOOM): 4 x hidden."""


def _plain(
    hidden: int,
    layers: int,
    heads: int,
    inner: int,
    vocab: int,
    *,
    tie: bool,
    bias: bool = True,
) -> dict[str, Any]:
    """A LayerNorm decoder block with a plain MLP and full multi-head attention,
    biases on every linear unless ``bias`` is false."""
    return {
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": heads,
        "intermediate_size": inner,
        "vocab_size": vocab,
        "tie_embeddings": tie,
        "mlp": "plain",
        "norm": "layernorm",
        "qkv_bias": bias,
        "o_bias": bias,
        "mlp_bias": bias,
    }


def _gpt2_named(f: Fields, model_type: str, *extra: str, tie: bool) -> dict[str, Any]:
    """A plain decoder from sizes named the GPT-2 way (``n_embd``, ``n_layer``,
    ``n_head``, ``n_inner`` defaulting to 4 x ``n_embd``): GPT-2 and GPT-J."""
    f.require(model_type, "n_embd", "n_layer", "n_head", "vocab_size", *extra)
    hidden = f.need("n_embd")
    inner = f.int("n_inner", default=MLP_EXPANSION * hidden)
    assert inner is not None
    return _plain(
        hidden, f.need("n_layer"), f.need("n_head"), inner, f.need("vocab_size"),
        tie=f.bool("tie_word_embeddings", tie),
    )


def _gpt2(f: Fields) -> Read:
    arch = _gpt2_named(f, "gpt2", "n_positions", tie=True)
    return {**arch, "learned_positions": f.need("n_positions")}, ()


def _opt(f: Fields) -> Read:
    f.require(
        "opt", "hidden_size", "num_hidden_layers", "num_attention_heads", "ffn_dim",
        "vocab_size", "max_position_embeddings",
    )
    hidden = f.need("hidden_size")
    projected = f.int("word_embed_proj_dim", default=hidden)
    if projected != hidden:
        raise HubError(
            HubErrorKind.UNSUPPORTED,
            f"config.json of {f.ref.id}: word_embed_proj_dim is {projected}, not "
            f"hidden_size {hidden}, so its embeddings are projected in and out of the "
            "decoder (as in facebook/opt-350m), which ftcost does not model. Pick a "
            "catalog OPT model (`models` lists them) or a bare size such as 350m.",
            f.ref.id,
        )
    arch = _plain(
        hidden, f.need("num_hidden_layers"), f.need("num_attention_heads"),
        f.need("ffn_dim"), f.need("vocab_size"),
        tie=f.bool("tie_word_embeddings", True),
        bias=f.bool("enable_bias", True),
    )
    arch["learned_positions"] = f.need("max_position_embeddings") + OPT_POSITION_OFFSET
    notes: tuple[str, ...] = ()
    if not f.bool("do_layer_norm_before", True):
        notes = (
            "Post-LayerNorm OPT (do_layer_norm_before false) has no final LayerNorm; "
            f"one is counted all the same ({2 * hidden:,} parameters).",
        )
    return arch, notes


def _bloom(f: Fields) -> Read:
    hidden_name = f.either("hidden_size", "n_embed")
    layers_name = f.either("n_layer", "num_hidden_layers")
    heads_name = f.either("n_head", "num_attention_heads")
    f.require("bloom", hidden_name, layers_name, heads_name, "vocab_size")
    hidden = f.need(hidden_name)
    arch = _plain(
        hidden, f.need(layers_name), f.need(heads_name), MLP_EXPANSION * hidden,
        f.need("vocab_size"), tie=f.bool("tie_word_embeddings", True),
    )
    return arch, ()


def _gpt_neox(f: Fields) -> Read:
    f.require("gpt_neox", *CORE_FIELDS)
    shared = decoder_fields(f, tie_default=False)
    bias = f.bool("attention_bias", True)
    arch = _plain(
        shared["hidden_size"], shared["num_layers"], shared["num_heads"],
        shared["intermediate_size"], shared["vocab_size"], tie=shared["tie_embeddings"],
    )
    return {**arch, "qkv_bias": bias, "o_bias": bias}, ()


def _gptj(f: Fields) -> Read:
    arch = _gpt2_named(f, "gptj", tie=False)
    return {
        **arch, "qkv_bias": False, "o_bias": False, "norms_per_layer": 1,
        "lm_head_bias": True,
    }, ()


def _phi(f: Fields) -> Read:
    f.require("phi", *CORE_FIELDS)
    shared = decoder_fields(f, tie_default=False)
    arch = _plain(
        shared["hidden_size"], shared["num_layers"], shared["num_heads"],
        shared["intermediate_size"], shared["vocab_size"], tie=shared["tie_embeddings"],
    )
    arch.update(
        num_kv_heads=shared["num_kv_heads"], norms_per_layer=1, lm_head_bias=True,
    )
    if "head_dim" in shared:
        arch["head_dim"] = shared["head_dim"]
    if not f.bool("qk_layernorm", False):
        return arch, ()
    return {**arch, "qk_norm": "head"}, (
        "qk_layernorm: the query and key LayerNorms' weights are counted, their biases "
        "(2 x head width per layer) are not.",
    )


def _falcon(f: Fields) -> Read:
    layers_name = f.either("num_hidden_layers", "n_layer")
    heads_name = f.either("num_attention_heads", "n_head")
    f.require("falcon", "hidden_size", layers_name, heads_name, "vocab_size")
    hidden, heads = f.need("hidden_size"), f.need(heads_name)
    new_arch = f.bool("new_decoder_architecture", False)
    # transformers' FalconAttention: the new architecture groups KV heads; the old one
    # has one KV head under multi_query and full multi-head attention otherwise.
    if new_arch:
        kv_heads = f.int("num_kv_heads", default=heads)
    else:
        kv_heads = 1 if f.bool("multi_query", True) else heads
    # FalconDecoderLayer: two LayerNorms unless attention and MLP run in parallel from
    # one (the old architecture, or num_ln_in_parallel_attn 1).
    parallel_norms = f.int("num_ln_in_parallel_attn", default=2 if new_arch else 1)
    two_norms = not f.bool("parallel_attn", True) or parallel_norms == 2
    inner = f.int("ffn_hidden_size", default=MLP_EXPANSION * hidden)
    assert inner is not None
    arch = _plain(
        hidden, f.need(layers_name), heads, inner, f.need("vocab_size"),
        tie=f.bool("tie_word_embeddings", True), bias=f.bool("bias", False),
    )
    return {**arch, "num_kv_heads": kv_heads, "norms_per_layer": 2 if two_norms else 1}, ()


CLASSIC_FAMILIES: Final[dict[str, FamilyReader]] = {
    "gpt2": _gpt2,
    "opt": _opt,
    "bloom": _bloom,
    "gpt_neox": _gpt_neox,
    "gptj": _gptj,
    "phi": _phi,
    "falcon": _falcon,
}
"""Registered in :data:`catalog.hub.families.FAMILIES` after the current families."""
