"""config.json to architecture, per family: real configs give the official totals, and
every config problem is an error naming it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from catalog.hub import HubError, HubErrorKind, HubRef
from catalog.hub.families import SUPPORTED, map_config
from tests.fakes.hub_configs import (
    DEEPSEEK_V3,
    GEMMA_2_9B,
    GEMMA_3_4B,
    LLAMA_3_1_8B,
    QWEN1_5_MOE_A2_7B,
    QWEN3_30B_A3B,
    REAL_MODELS,
    RealModel,
)
from tests.fakes.hub_configs_classic import (
    BLOOM_560M,
    CLASSIC_MODELS,
    FALCON_7B,
    GPT2,
    OPT_125M,
    OPT_350M_CONFIG,
    PHI_2,
)

REF = HubRef("acme/model")


def official(model: RealModel, catalog) -> float:
    if model.catalog_id is not None:
        return catalog.model(model.catalog_id).official_params
    assert model.official_params is not None and model.official_source
    return model.official_params


def config_with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in changes.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


@pytest.mark.parametrize("model", REAL_MODELS, ids=lambda m: m.repo)
def test_real_config_counts_the_official_total_within_one_percent(model, catalog):
    mapped = map_config(model.config, HubRef(model.repo))

    assert mapped.architecture.total_params == pytest.approx(official(model, catalog), rel=0.01)


def test_every_supported_family_has_a_real_config():
    families = {m.config["model_type"] for m in REAL_MODELS + CLASSIC_MODELS}

    assert set(SUPPORTED) <= families


@pytest.mark.parametrize(
    "model", [QWEN1_5_MOE_A2_7B, QWEN3_30B_A3B], ids=lambda m: m.repo
)
def test_qwen_moe_active_parameters_match_the_model_card(model, catalog):
    expected = (
        model.official_active_params
        if model.catalog_id is None
        else catalog.model(model.catalog_id).official_active_params
    )
    mapped = map_config(model.config, HubRef(model.repo))

    assert mapped.architecture.active_params == pytest.approx(expected, rel=0.02)


@pytest.mark.parametrize(
    "model", [m for m in REAL_MODELS if m.catalog_id and m.repo != GEMMA_3_4B.repo],
    ids=lambda m: m.repo,
)
def test_hub_mapping_gives_the_catalog_entrys_exact_count(model, catalog):
    # The catalog transcribed the same files by hand; the mapping must agree to the unit.
    mapped = map_config(model.config, HubRef(model.repo))

    assert mapped.architecture.total_params == catalog.model(model.catalog_id).params


@pytest.mark.parametrize("model", CLASSIC_MODELS, ids=lambda m: m.repo)
def test_older_family_config_gives_the_catalog_entrys_exact_count(model, catalog):
    # Same numbers as the catalog entry, read under the family's own field names: the
    # Hub reader and the hand transcription must agree to the unit.
    mapped = map_config(model.config, HubRef(model.repo))

    assert mapped.architecture.total_params == catalog.model(model.catalog_id).params
    assert mapped.architecture == catalog.model(model.catalog_id).architecture


def test_gpt2_learned_positions_are_n_positions():
    assert map_config(GPT2.config, REF).architecture.learned_positions == 1024


def test_opt_learned_positions_add_the_two_offset_rows():
    assert map_config(OPT_125M.config, REF).architecture.learned_positions == 2050


def test_opt_with_projected_embeddings_is_refused_naming_both_widths():
    err = error_of(OPT_350M_CONFIG)

    assert err.kind is HubErrorKind.UNSUPPORTED and err.cacheable
    assert "word_embed_proj_dim is 512, not hidden_size 1024" in str(err)
    assert "does not model" in str(err) and "`models` lists them" in str(err)


def test_post_layernorm_opt_says_its_final_norm_is_counted_anyway():
    config = config_with(OPT_350M_CONFIG, word_embed_proj_dim=1024)

    notes = map_config(config, REF).notes

    assert any("do_layer_norm_before false" in n for n in notes)


def test_opt_without_biases_drops_every_linear_bias():
    arch = map_config(config_with(OPT_125M.config, enable_bias=False), REF).architecture

    assert not (arch.qkv_bias or arch.o_bias or arch.mlp_bias)


def test_bloom_reads_the_older_n_embed_name_for_its_width():
    config = config_with(BLOOM_560M.config, hidden_size=None, n_embed=1024)

    assert map_config(config, REF).architecture == map_config(BLOOM_560M.config, REF).architecture


def test_falcon_without_multi_query_has_a_kv_head_per_query_head():
    arch = map_config(config_with(FALCON_7B.config, multi_query=False), REF).architecture

    assert arch.num_kv_heads == arch.num_heads == 71


def test_phi_qk_layernorm_adds_head_norms_and_says_what_is_left_out():
    mapped = map_config(config_with(PHI_2.config, qk_layernorm=True), REF)

    assert mapped.architecture.qk_norm == "head"
    assert any("biases" in n for n in mapped.notes)


def test_gpt2_missing_its_width_names_n_embd():
    err = error_of(config_with(GPT2.config, n_embd=None))

    assert err.kind is HubErrorKind.MISSING_FIELDS
    assert "lacks n_embd, which a gpt2 model needs" in str(err)


def test_qwen2_moe_has_one_gated_shared_expert():
    moe = map_config(QWEN1_5_MOE_A2_7B.config, REF).architecture.moe

    assert moe is not None
    assert (moe.num_shared_experts, moe.shared_intermediate_size, moe.shared_expert_gate) == (
        1, 5632, True
    )


def test_deepseek_v3_keeps_three_dense_layers_and_mla():
    arch = map_config(DEEPSEEK_V3.config, REF).architecture

    assert arch.moe is not None and arch.moe.first_dense_layers == 3
    assert arch.moe.router_correction_bias
    assert arch.mla is not None and arch.mla.q_lora_rank == 1536


def test_deepseek_v3_says_the_mtp_layer_is_not_counted():
    notes = map_config(DEEPSEEK_V3.config, REF).notes

    assert any("multi-token-prediction" in n for n in notes)


def test_quantization_method_is_read():
    assert map_config(DEEPSEEK_V3.config, REF).quantization == "fp8"
    assert map_config(LLAMA_3_1_8B.config, REF).quantization is None


def test_gemma2_without_tie_word_embeddings_is_tied_as_transformers_does():
    assert "tie_word_embeddings" not in GEMMA_2_9B.config
    assert map_config(GEMMA_2_9B.config, REF).architecture.tie_embeddings


def test_gemma2_soft_caps_its_logits_and_gemma3_does_not():
    assert map_config(GEMMA_2_9B.config, REF).architecture.logit_softcap
    assert not map_config(GEMMA_3_4B.config, REF).architecture.logit_softcap
    uncapped = config_with(GEMMA_2_9B.config, final_logit_softcapping=None)
    assert not map_config(uncapped, REF).architecture.logit_softcap


def test_gemma3_text_config_gaps_take_transformers_defaults_and_say_so():
    mapped = map_config(GEMMA_3_4B.config, REF)

    assert mapped.architecture.num_heads == 8 and mapped.architecture.head_dim == 256
    assert mapped.architecture.vocab_size == 262_208
    assert mapped.multimodal
    assert any("num_attention_heads 8" in n for n in mapped.notes)
    assert any("vision encoder" in n for n in mapped.notes)


def test_interleaved_dense_layers_are_counted_and_noted():
    config = config_with(QWEN3_30B_A3B.config, mlp_only_layers=[5, 17])
    mapped = map_config(config, REF)
    all_moe = map_config(QWEN3_30B_A3B.config, REF).architecture

    assert mapped.architecture.moe is not None
    assert mapped.architecture.moe.first_dense_layers == 2
    assert mapped.architecture.total_params < all_moe.total_params
    assert any("not the leading ones" in n for n in mapped.notes)


def test_decoder_sparse_step_makes_every_other_layer_dense():
    mapped = map_config(config_with(QWEN3_30B_A3B.config, decoder_sparse_step=2), REF)

    assert mapped.architecture.moe is not None
    assert mapped.architecture.moe.first_dense_layers == 24


# -- errors ----------------------------------------------------------------------------------


def error_of(config: Any) -> HubError:
    with pytest.raises(HubError) as info:
        map_config(config, REF)
    return info.value


def test_unknown_family_names_it_and_lists_the_supported_ones():
    err = error_of({"model_type": "mamba", "hidden_size": 768})

    assert err.kind is HubErrorKind.UNSUPPORTED and err.cacheable
    assert "model_type 'mamba' (acme/model) is not supported yet" in str(err)
    assert "supported: llama, mistral, mixtral, qwen2, qwen2_moe" in str(err)


def test_missing_fields_are_all_named():
    err = error_of(config_with(LLAMA_3_1_8B.config, num_hidden_layers=None, vocab_size=None))

    assert err.kind is HubErrorKind.MISSING_FIELDS
    assert "lacks num_hidden_layers, vocab_size, which a llama model needs" in str(err)


def test_missing_moe_fields_are_named_for_the_family():
    err = error_of(config_with(QWEN1_5_MOE_A2_7B.config, shared_expert_intermediate_size=None))

    assert "lacks shared_expert_intermediate_size, which a qwen2_moe model needs" in str(err)


def test_missing_model_type_says_the_family_is_unknown():
    err = error_of(config_with(LLAMA_3_1_8B.config, model_type=None))

    assert err.kind is HubErrorKind.MISSING_FIELDS
    assert "has no model_type" in str(err) and "Supported: llama" in str(err)


def test_gemma3_without_text_config_is_named():
    err = error_of(config_with(GEMMA_3_4B.config, text_config=None))

    assert "lacks text_config" in str(err)


@pytest.mark.parametrize(
    ("field", "value", "wanted"),
    [
        ("hidden_size", "4096", "a whole number"),
        ("num_hidden_layers", 0, "a whole number of at least 1"),
        ("tie_word_embeddings", "no", "true or false"),
        ("hidden_size", 40.5, "a whole number"),
    ],
)
def test_a_field_of_the_wrong_type_is_named_with_its_value(field, value, wanted):
    err = error_of(config_with(LLAMA_3_1_8B.config, **{field: value}))

    assert err.kind is HubErrorKind.MALFORMED
    assert f"{field} must be {wanted}" in str(err) and repr(value) in str(err)


def test_a_config_that_is_not_an_object_is_malformed():
    err = error_of(["not", "a", "config"])

    assert err.kind is HubErrorKind.MALFORMED and "not a JSON object" in str(err)
