"""Real ``config.json`` files, one or more per supported family, for the fake Hub.

Each is the model's published ``config.json`` (the file ``catalog/models.yaml`` cites
as the entry's ``source``, or the copy named there), transcribed field for field; the
official parameter totals come from the catalog (``official_params``), except Qwen1.5-
MoE-A2.7B, which the catalog does not list (its model card's figure is given here).
``index_total_size`` is the real ``model.safetensors.index.json`` ``metadata.total_size``
where the catalog's ``params_source`` quotes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RealModel:
    repo: str
    config: dict[str, Any]
    catalog_id: str | None
    """The catalog entry with the same architecture (its official_params is the total)."""
    official_params: float | None = None
    """Only for models not in the catalog, with ``official_source``."""
    official_active_params: float | None = None
    official_source: str = ""
    index_total_size: int | None = None


LLAMA_3_1_8B = RealModel(
    "meta-llama/Llama-3.1-8B",
    {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 128000,
        "eos_token_id": 128001,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "initializer_range": 0.02,
        "intermediate_size": 14336,
        "max_position_embeddings": 131072,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
        "rope_theta": 500000.0,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.43.0.dev0",
        "use_cache": True,
        "vocab_size": 128256,
    },
    "llama-3.1-8b",
    index_total_size=16_060_522_496,
)

LLAMA_3_2_1B = RealModel(
    "meta-llama/Llama-3.2-1B",
    {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 128000,
        "eos_token_id": 128001,
        "head_dim": 64,
        "hidden_act": "silu",
        "hidden_size": 2048,
        "initializer_range": 0.02,
        "intermediate_size": 8192,
        "max_position_embeddings": 131072,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": 32,
        "num_hidden_layers": 16,
        "num_key_value_heads": 8,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": {
            "factor": 32.0,
            "high_freq_factor": 4.0,
            "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192,
            "rope_type": "llama3",
        },
        "rope_theta": 500000.0,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.45.0.dev0",
        "use_cache": True,
        "vocab_size": 128256,
    },
    "llama-3.2-1b",
)

MISTRAL_7B_V03 = RealModel(
    "mistralai/Mistral-7B-v0.3",
    {
        "architectures": ["MistralForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "initializer_range": 0.02,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "model_type": "mistral",
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-05,
        "rope_theta": 1000000.0,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.42.0.dev0",
        "use_cache": True,
        "vocab_size": 32768,
    },
    "mistral-7b-v0.3",
    index_total_size=14_496_047_104,
)

MISTRAL_NEMO = RealModel(
    "mistralai/Mistral-Nemo-Instruct-2407",
    {
        "architectures": ["MistralForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 5120,
        "initializer_range": 0.02,
        "intermediate_size": 14336,
        "max_position_embeddings": 1024000,
        "model_type": "mistral",
        "num_attention_heads": 32,
        "num_hidden_layers": 40,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-05,
        "rope_theta": 1000000.0,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.43.0.dev0",
        "use_cache": True,
        "vocab_size": 131072,
    },
    "mistral-nemo-12b",
    index_total_size=24_495_564_800,
)

MIXTRAL_8X7B = RealModel(
    "mistralai/Mixtral-8x7B-v0.1",
    {
        "architectures": ["MixtralForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "initializer_range": 0.02,
        "intermediate_size": 14336,
        "max_position_embeddings": 32768,
        "model_type": "mixtral",
        "num_attention_heads": 32,
        "num_experts_per_tok": 2,
        "num_hidden_layers": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "output_router_logits": False,
        "rms_norm_eps": 1e-05,
        "rope_theta": 1000000.0,
        "router_aux_loss_coef": 0.02,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.36.0.dev0",
        "use_cache": True,
        "vocab_size": 32000,
    },
    "mixtral-8x7b",
)

QWEN2_5_7B_INSTRUCT = RealModel(
    "Qwen/Qwen2.5-7B-Instruct",
    {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "hidden_act": "silu",
        "hidden_size": 3584,
        "initializer_range": 0.02,
        "intermediate_size": 18944,
        "max_position_embeddings": 32768,
        "max_window_layers": 28,
        "model_type": "qwen2",
        "num_attention_heads": 28,
        "num_hidden_layers": 28,
        "num_key_value_heads": 4,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "sliding_window": 131072,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.43.1",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 152064,
    },
    "qwen2.5-7b",
    index_total_size=15_231_233_024,
)

QWEN1_5_MOE_A2_7B = RealModel(
    "Qwen/Qwen1.5-MoE-A2.7B",
    {
        "architectures": ["Qwen2MoeForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "decoder_sparse_step": 1,
        "eos_token_id": 151643,
        "hidden_act": "silu",
        "hidden_size": 2048,
        "initializer_range": 0.02,
        "intermediate_size": 5632,
        "max_position_embeddings": 32768,
        "max_window_layers": 21,
        "model_type": "qwen2_moe",
        "moe_intermediate_size": 1408,
        "norm_topk_prob": False,
        "num_attention_heads": 16,
        "num_experts": 60,
        "num_experts_per_tok": 4,
        "num_hidden_layers": 24,
        "num_key_value_heads": 16,
        "output_router_logits": False,
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "router_aux_loss_coef": 0.001,
        "shared_expert_intermediate_size": 5632,
        "sliding_window": 32768,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.40.0.dev0",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    },
    None,
    official_params=14.3e9,
    official_active_params=2.7e9,
    official_source=(
        "https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B model card: \"14.3B parameters in "
        "total and 2.7B activated parameters during runtime\""
    ),
)

QWEN3_8B = RealModel(
    "Qwen/Qwen3-8B",
    {
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "eos_token_id": 151645,
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 4096,
        "initializer_range": 0.02,
        "intermediate_size": 12288,
        "max_position_embeddings": 40960,
        "max_window_layers": 36,
        "model_type": "qwen3",
        "num_attention_heads": 32,
        "num_hidden_layers": 36,
        "num_key_value_heads": 8,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.51.0",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    },
    "qwen3-8b",
    index_total_size=16_381_470_720,
)

QWEN3_30B_A3B = RealModel(
    "Qwen/Qwen3-30B-A3B",
    {
        "architectures": ["Qwen3MoeForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 151643,
        "decoder_sparse_step": 1,
        "eos_token_id": 151645,
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 2048,
        "initializer_range": 0.02,
        "intermediate_size": 6144,
        "max_position_embeddings": 40960,
        "max_window_layers": 48,
        "mlp_only_layers": [],
        "model_type": "qwen3_moe",
        "moe_intermediate_size": 768,
        "norm_topk_prob": True,
        "num_attention_heads": 32,
        "num_experts": 128,
        "num_experts_per_tok": 8,
        "num_hidden_layers": 48,
        "num_key_value_heads": 4,
        "output_router_logits": False,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 1000000.0,
        "router_aux_loss_coef": 0.001,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.51.0",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": 151936,
    },
    "qwen3-30b-a3b",
)

GEMMA_2_9B = RealModel(
    "google/gemma-2-9b",
    {
        "architectures": ["Gemma2ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "attn_logit_softcapping": 50.0,
        "bos_token_id": 2,
        "cache_implementation": "hybrid",
        "eos_token_id": 1,
        "final_logit_softcapping": 30.0,
        "head_dim": 256,
        "hidden_act": "gelu_pytorch_tanh",
        "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 3584,
        "initializer_range": 0.02,
        "intermediate_size": 14336,
        "max_position_embeddings": 8192,
        "model_type": "gemma2",
        "num_attention_heads": 16,
        "num_hidden_layers": 42,
        "num_key_value_heads": 8,
        "pad_token_id": 0,
        "query_pre_attn_scalar": 256,
        "rms_norm_eps": 1e-06,
        "rope_theta": 10000.0,
        "sliding_window": 4096,
        "sliding_window_size": 4096,
        "torch_dtype": "float32",
        "transformers_version": "4.42.0.dev0",
        "use_cache": True,
        "vocab_size": 256000,
    },
    "gemma-2-9b",
)

GEMMA_3_4B = RealModel(
    "google/gemma-3-4b-pt",
    {
        "architectures": ["Gemma3ForConditionalGeneration"],
        "boi_token_index": 255999,
        "eoi_token_index": 256000,
        "eos_token_id": [1, 106],
        "image_token_index": 262144,
        "initializer_range": 0.02,
        "mm_tokens_per_image": 256,
        "model_type": "gemma3",
        "text_config": {
            "hidden_size": 2560,
            "intermediate_size": 10240,
            "model_type": "gemma3_text",
            "num_hidden_layers": 34,
            "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
            "sliding_window": 1024,
        },
        "torch_dtype": "bfloat16",
        "transformers_version": "4.50.0.dev0",
        "vision_config": {
            "hidden_size": 1152,
            "image_size": 896,
            "intermediate_size": 4304,
            "model_type": "siglip_vision_model",
            "num_attention_heads": 16,
            "num_hidden_layers": 27,
            "patch_size": 14,
            "vision_use_head": False,
        },
    },
    "gemma-3-4b",
)

GEMMA_3_1B = RealModel(
    "google/gemma-3-1b-pt",
    {
        "architectures": ["Gemma3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "attn_logit_softcapping": None,
        "bos_token_id": 2,
        "cache_implementation": "hybrid",
        "eos_token_id": 1,
        "final_logit_softcapping": None,
        "head_dim": 256,
        "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": 1152,
        "initializer_range": 0.02,
        "intermediate_size": 6912,
        "max_position_embeddings": 32768,
        "model_type": "gemma3_text",
        "num_attention_heads": 4,
        "num_hidden_layers": 26,
        "num_key_value_heads": 1,
        "pad_token_id": 0,
        "query_pre_attn_scalar": 256,
        "rms_norm_eps": 1e-06,
        "rope_local_base_freq": 10000,
        "rope_scaling": None,
        "rope_theta": 1000000,
        "sliding_window": 512,
        "sliding_window_pattern": 6,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.50.0.dev0",
        "use_cache": True,
        "vocab_size": 262144,
    },
    "gemma-3-1b",
)

PHI_3_MINI = RealModel(
    "microsoft/Phi-3-mini-4k-instruct",
    {
        "architectures": ["Phi3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 1,
        "embd_pdrop": 0.0,
        "eos_token_id": 32000,
        "hidden_act": "silu",
        "hidden_size": 3072,
        "initializer_range": 0.02,
        "intermediate_size": 8192,
        "max_position_embeddings": 4096,
        "model_type": "phi3",
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "num_key_value_heads": 32,
        "original_max_position_embeddings": 4096,
        "pad_token_id": 32000,
        "resid_pdrop": 0.0,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 10000.0,
        "sliding_window": 2047,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.40.2",
        "use_cache": True,
        "vocab_size": 32064,
    },
    "phi-3-mini",
)

PHI_4 = RealModel(
    "microsoft/phi-4",
    {
        "architectures": ["Phi3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 100257,
        "embd_pdrop": 0.0,
        "eos_token_id": 100265,
        "hidden_act": "silu",
        "hidden_size": 5120,
        "initializer_range": 0.02,
        "intermediate_size": 17920,
        "max_position_embeddings": 16384,
        "model_type": "phi3",
        "num_attention_heads": 40,
        "num_hidden_layers": 40,
        "num_key_value_heads": 10,
        "original_max_position_embeddings": 16384,
        "pad_token_id": 100349,
        "resid_pdrop": 0.0,
        "rms_norm_eps": 1e-05,
        "rope_scaling": None,
        "rope_theta": 250000,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.47.0",
        "use_cache": True,
        "vocab_size": 100352,
    },
    "phi-4",
    index_total_size=29_319_014_400,
)

DEEPSEEK_V3 = RealModel(
    "deepseek-ai/DeepSeek-V3",
    {
        "architectures": ["DeepseekV3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "auto_map": {
            "AutoConfig": "configuration_deepseek.DeepseekV3Config",
            "AutoModel": "modeling_deepseek.DeepseekV3Model",
            "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM",
        },
        "aux_loss_alpha": 0.001,
        "bos_token_id": 0,
        "eos_token_id": 1,
        "ep_size": 1,
        "first_k_dense_replace": 3,
        "hidden_act": "silu",
        "hidden_size": 7168,
        "initializer_range": 0.02,
        "intermediate_size": 18432,
        "kv_lora_rank": 512,
        "max_position_embeddings": 163840,
        "model_type": "deepseek_v3",
        "moe_intermediate_size": 2048,
        "moe_layer_freq": 1,
        "n_group": 8,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "norm_topk_prob": True,
        "num_attention_heads": 128,
        "num_experts_per_tok": 8,
        "num_hidden_layers": 61,
        "num_key_value_heads": 128,
        "num_nextn_predict_layers": 1,
        "pretraining_tp": 1,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "quantization_config": {
            "activation_scheme": "dynamic",
            "fmt": "e4m3",
            "quant_method": "fp8",
            "weight_block_size": [128, 128],
        },
        "rms_norm_eps": 1e-06,
        "rope_scaling": {
            "beta_fast": 32,
            "beta_slow": 1,
            "factor": 40,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "original_max_position_embeddings": 4096,
            "type": "yarn",
        },
        "rope_theta": 10000,
        "routed_scaling_factor": 2.5,
        "scoring_func": "sigmoid",
        "seq_aux": True,
        "tie_word_embeddings": False,
        "topk_group": 4,
        "topk_method": "noaux_tc",
        "torch_dtype": "bfloat16",
        "transformers_version": "4.33.1",
        "use_cache": True,
        "v_head_dim": 128,
        "vocab_size": 129280,
    },
    "deepseek-v3",
)

GPT_OSS_20B = RealModel(
    "openai/gpt-oss-20b",
    {
        "architectures": ["GptOssForCausalLM"],
        "attention_bias": True,
        "attention_dropout": 0.0,
        "eos_token_id": 200002,
        "experts_per_token": 4,
        "head_dim": 64,
        "hidden_act": "silu",
        "hidden_size": 2880,
        "initial_context_length": 4096,
        "initializer_range": 0.02,
        "intermediate_size": 2880,
        "layer_types": ["sliding_attention", "full_attention"] * 12,
        "max_position_embeddings": 131072,
        "model_type": "gpt_oss",
        "num_attention_heads": 64,
        "num_experts_per_tok": 4,
        "num_hidden_layers": 24,
        "num_key_value_heads": 8,
        "num_local_experts": 32,
        "output_router_logits": False,
        "pad_token_id": 199999,
        "quantization_config": {
            "modules_to_not_convert": [
                "model.layers.*.self_attn",
                "model.layers.*.mlp.router",
                "model.embed_tokens",
                "lm_head",
            ],
            "quant_method": "mxfp4",
        },
        "rms_norm_eps": 1e-05,
        "rope_scaling": {
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "rope_type": "yarn",
            "truncate": False,
        },
        "rope_theta": 150000,
        "router_aux_loss_coef": 0.9,
        "sliding_window": 128,
        "swiglu_limit": 7.0,
        "tie_word_embeddings": False,
        "transformers_version": "4.55.0.dev0",
        "use_cache": True,
        "vocab_size": 201088,
    },
    "gpt-oss-20b",
)


def _olmo2(hidden: int, inter: int, layers: int, heads: int, version: str) -> dict[str, Any]:
    return {
        "architectures": ["Olmo2ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "eos_token_id": 100257,
        "hidden_act": "silu",
        "hidden_size": hidden,
        "initializer_range": 0.02,
        "intermediate_size": inter,
        "max_position_embeddings": 4096,
        "model_type": "olmo2",
        "num_attention_heads": heads,
        "num_hidden_layers": layers,
        "num_key_value_heads": heads,
        "pad_token_id": 100277,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": 500000,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "transformers_version": version,
        "use_cache": True,
        "vocab_size": 100352,
    }


OLMO_2_7B = RealModel("allenai/OLMo-2-1124-7B", _olmo2(4096, 11008, 32, 32, "4.47.0.dev0"),
                      "olmo-2-7b")
OLMO_2_13B = RealModel(
    "allenai/OLMo-2-1124-13B",
    _olmo2(5120, 13824, 40, 40, "4.47.0"),
    "olmo-2-13b",
    index_total_size=54_864_793_600,
)

REAL_MODELS: tuple[RealModel, ...] = (
    LLAMA_3_1_8B,
    LLAMA_3_2_1B,
    MISTRAL_7B_V03,
    MISTRAL_NEMO,
    MIXTRAL_8X7B,
    QWEN2_5_7B_INSTRUCT,
    QWEN1_5_MOE_A2_7B,
    QWEN3_8B,
    QWEN3_30B_A3B,
    GEMMA_2_9B,
    GEMMA_3_4B,
    GEMMA_3_1B,
    PHI_3_MINI,
    PHI_4,
    DEEPSEEK_V3,
    GPT_OSS_20B,
    OLMO_2_7B,
    OLMO_2_13B,
)

GEMMA_3_4B_INDEX_TOTAL_SIZE = 8_600_158_944
"""google/gemma-3-4b-pt's index total_size (bf16): 4,300,079,472 values, the 4.3B of the
model's name, vision encoder included."""


def llama_tensors(
    *, layers: int, hidden: int, inter: int, heads: int, kv_heads: int, head_dim: int,
    vocab: int, tied: bool,
) -> dict[str, list[int]]:
    """The tensor names and shapes of a Llama checkpoint as transformers saves it
    (``LlamaForCausalLM.state_dict()``): what a ``model.safetensors`` header lists."""
    out: dict[str, list[int]] = {"model.embed_tokens.weight": [vocab, hidden]}
    for i in range(layers):
        p = f"model.layers.{i}."
        out[p + "input_layernorm.weight"] = [hidden]
        out[p + "post_attention_layernorm.weight"] = [hidden]
        out[p + "self_attn.q_proj.weight"] = [heads * head_dim, hidden]
        out[p + "self_attn.k_proj.weight"] = [kv_heads * head_dim, hidden]
        out[p + "self_attn.v_proj.weight"] = [kv_heads * head_dim, hidden]
        out[p + "self_attn.o_proj.weight"] = [hidden, heads * head_dim]
        out[p + "mlp.gate_proj.weight"] = [inter, hidden]
        out[p + "mlp.up_proj.weight"] = [inter, hidden]
        out[p + "mlp.down_proj.weight"] = [hidden, inter]
    out["model.norm.weight"] = [hidden]
    if not tied:
        out["lm_head.weight"] = [vocab, hidden]
    return out


LLAMA_3_2_1B_TENSORS = llama_tensors(
    layers=16, hidden=2048, inter=8192, heads=32, kv_heads=8, head_dim=64, vocab=128256,
    tied=True,
)
"""meta-llama/Llama-3.2-1B ships one model.safetensors (tied: no lm_head tensor)."""
