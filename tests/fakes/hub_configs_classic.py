"""``config.json`` files for the older families (GPT-2, OPT, BLOOM, GPT-NeoX, GPT-J,
Gemma 1, Phi-1.5/2, Falcon), one or two per ``model_type``.

Each holds the fields the transformers config of that model sets, with the values the
matching ``catalog/models.yaml`` entry's ``source`` quotes (hidden width, depth, heads,
widths, vocabulary, position rows, tying and the family's switches), under the names
and in the spelling the family's ``config.json`` uses (``n_embd``, ``ffn_dim``,
``multi_query``...). They are not full transcriptions: fields no reader looks at
(dropouts, token ids, epsilons) are left out. ``catalog_id`` names the entry whose
derived parameter count the mapping must equal.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.hub_configs import RealModel


def _gpt2(n_embd: int, n_layer: int, n_head: int) -> dict[str, Any]:
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "n_ctx": 1024,
        "n_embd": n_embd,
        "n_head": n_head,
        "n_layer": n_layer,
        "n_positions": 1024,
        "vocab_size": 50257,
    }


def _opt(hidden: int, layers: int, heads: int, **extra: Any) -> dict[str, Any]:
    return {
        "activation_function": "relu",
        "architectures": ["OPTForCausalLM"],
        "do_layer_norm_before": True,
        "ffn_dim": 4 * hidden,
        "hidden_size": hidden,
        "max_position_embeddings": 2048,
        "model_type": "opt",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "torch_dtype": "float16",
        "vocab_size": 50272,
        "word_embed_proj_dim": hidden,
        **extra,
    }


def _bloom(hidden: int, layers: int, heads: int) -> dict[str, Any]:
    return {
        "architectures": ["BloomForCausalLM"],
        "hidden_size": hidden,
        "model_type": "bloom",
        "n_head": heads,
        "n_inner": None,
        "n_layer": layers,
        "vocab_size": 250880,
    }


def _gpt_neox(hidden: int, layers: int, heads: int, vocab: int) -> dict[str, Any]:
    return {
        "architectures": ["GPTNeoXForCausalLM"],
        "hidden_act": "gelu",
        "hidden_size": hidden,
        "intermediate_size": 4 * hidden,
        "model_type": "gpt_neox",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "rotary_pct": 0.25,
        "tie_word_embeddings": False,
        "use_parallel_residual": True,
        "vocab_size": vocab,
    }


def _gemma(hidden: int, inter: int, layers: int, heads: int, kv: int) -> dict[str, Any]:
    return {
        "architectures": ["GemmaForCausalLM"],
        "head_dim": 256,
        "hidden_size": hidden,
        "intermediate_size": inter,
        "model_type": "gemma",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": kv,
        "torch_dtype": "bfloat16",
        "vocab_size": 256000,
    }


def _phi(hidden: int, layers: int, rotary: float) -> dict[str, Any]:
    return {
        "architectures": ["PhiForCausalLM"],
        "hidden_size": hidden,
        "intermediate_size": 4 * hidden,
        "model_type": "phi",
        "num_attention_heads": 32,
        "num_hidden_layers": layers,
        "num_key_value_heads": 32,
        "partial_rotary_factor": rotary,
        "qk_layernorm": False,
        "tie_word_embeddings": False,
        "vocab_size": 51200,
    }


GPT2 = RealModel("openai-community/gpt2", _gpt2(768, 12, 12), "gpt2")
GPT2_XL = RealModel("openai-community/gpt2-xl", _gpt2(1600, 48, 25), "gpt2-xl")
OPT_125M = RealModel("facebook/opt-125m", _opt(768, 12, 12), "opt-125m")
OPT_6_7B = RealModel("facebook/opt-6.7b", _opt(4096, 32, 32), "opt-6.7b")
BLOOM_560M = RealModel("bigscience/bloom-560m", _bloom(1024, 24, 16), "bloom-560m")
BLOOM_7B1 = RealModel("bigscience/bloom-7b1", _bloom(4096, 30, 32), "bloom-7b1")
PYTHIA_70M = RealModel("EleutherAI/pythia-70m", _gpt_neox(512, 6, 8, 50304), "pythia-70m")
PYTHIA_12B = RealModel("EleutherAI/pythia-12b", _gpt_neox(5120, 36, 40, 50688), "pythia-12b")
STABLELM_ALPHA_3B = RealModel(
    "stabilityai/stablelm-base-alpha-3b",
    _gpt_neox(4096, 16, 32, 50688),
    "stablelm-base-alpha-3b",
)
GPT_J_6B = RealModel(
    "EleutherAI/gpt-j-6b",
    {
        "architectures": ["GPTJForCausalLM"],
        "model_type": "gptj",
        "n_embd": 4096,
        "n_head": 16,
        "n_inner": None,
        "n_layer": 28,
        "n_positions": 2048,
        "rotary_dim": 64,
        "tie_word_embeddings": False,
        "vocab_size": 50400,
    },
    "gpt-j-6b",
)
GEMMA_2B = RealModel("google/gemma-2b", _gemma(2048, 16384, 18, 8, 1), "gemma-2b")
GEMMA_7B = RealModel("google/gemma-7b", _gemma(3072, 24576, 28, 16, 16), "gemma-7b")
PHI_1_5 = RealModel("microsoft/phi-1_5", _phi(2048, 24, 0.5), "phi-1.5")
PHI_2 = RealModel("microsoft/phi-2", _phi(2560, 32, 0.4), "phi-2")
FALCON_7B = RealModel(
    "tiiuae/falcon-7b",
    {
        "alibi": False,
        "architectures": ["FalconForCausalLM"],
        "bias": False,
        "hidden_size": 4544,
        "model_type": "falcon",
        "multi_query": True,
        "new_decoder_architecture": False,
        "num_attention_heads": 71,
        "num_hidden_layers": 32,
        "parallel_attn": True,
        "vocab_size": 65024,
    },
    "falcon-7b",
)
FALCON_40B = RealModel(
    "tiiuae/falcon-40b",
    {
        "alibi": False,
        "architectures": ["FalconForCausalLM"],
        "bias": False,
        "hidden_size": 8192,
        "model_type": "falcon",
        "new_decoder_architecture": True,
        "num_attention_heads": 128,
        "num_hidden_layers": 60,
        "num_kv_heads": 8,
        "parallel_attn": True,
        "vocab_size": 65024,
    },
    "falcon-40b",
)

OPT_350M_CONFIG: dict[str, Any] = _opt(
    1024, 24, 16, word_embed_proj_dim=512, do_layer_norm_before=False
)
"""facebook/opt-350m: embeddings of 512 projected to and from the 1024-wide decoder,
and post-LayerNorm blocks; the only released OPT size with either."""

CLASSIC_MODELS: tuple[RealModel, ...] = (
    GPT2,
    GPT2_XL,
    OPT_125M,
    OPT_6_7B,
    BLOOM_560M,
    BLOOM_7B1,
    PYTHIA_70M,
    PYTHIA_12B,
    STABLELM_ALPHA_3B,
    GPT_J_6B,
    GEMMA_2B,
    GEMMA_7B,
    PHI_1_5,
    PHI_2,
    FALCON_7B,
    FALCON_40B,
)
