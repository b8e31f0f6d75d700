"""Hostile Hub data (issue 14, items 1, 2 and 11): every size is checked against a bound
no real model reaches, before any per-layer work; huge numbers are clear errors naming
the model, the field and the bound, cached as negative answers; echoed text is capped."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from catalog.hub import HubError, HubErrorKind, HubRef
from catalog.hub.bounds import MAX_LAYERS, MAX_PARAMS, MAX_VOCAB
from catalog.hub.errors import ECHO_CHARS, shown
from catalog.hub.families import deepseek_moe_layers, map_config, qwen_moe_layers
from catalog.hub.resolver import HubResolver, MemoryCache
from catalog.hub.settings import HubSettings
from engine.architecture import Architecture, MoE
from tests.fakes.hub_configs import (
    DEEPSEEK_V3,
    LLAMA_3_1_8B,
    LLAMA_3_2_1B,
    QWEN1_5_MOE_A2_7B,
    QWEN3_30B_A3B,
)
from tests.fakes.hub_configs_classic import (
    BLOOM_560M,
    FALCON_40B,
    GPT2,
    GPT_J_6B,
    OPT_125M,
)
from tests.fakes.hub_server import FakeHub, index_json, safetensors_bytes

REF = HubRef("acme/model")
MOE_CONFIGS = [QWEN1_5_MOE_A2_7B.config, QWEN3_30B_A3B.config, DEEPSEEK_V3.config]




def resolver_for(hub: FakeHub) -> HubResolver:
    return HubResolver(HubSettings(endpoint=hub.base_url, timeout_s=2.0), MemoryCache())


def with_fields(config: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(config)
    out.update(changes)
    return out


def refusal(config: Any) -> HubError:
    with pytest.raises(HubError) as info:
        map_config(config, REF)
    return info.value


# -- sizes beyond any real model ------------------------------------------------------


@pytest.mark.parametrize("config", MOE_CONFIGS, ids=["qwen2_moe", "qwen3_moe", "deepseek_v3"])
@pytest.mark.parametrize("layers", [10**8, 10**12, 1e8])
def test_a_hundred_million_layers_is_refused_naming_the_field_and_bound(config, layers):
    err = refusal(with_fields(config, num_hidden_layers=layers))

    assert err.kind is HubErrorKind.TOO_LARGE and err.cacheable
    assert "config.json of acme/model: num_hidden_layers is" in str(err)
    assert f"up to {MAX_LAYERS:,}" in str(err)


def test_a_million_layers_is_refused():
    err = refusal(with_fields(LLAMA_3_1_8B.config, num_hidden_layers=10**6))

    assert err.kind is HubErrorKind.TOO_LARGE and "num_hidden_layers" in str(err)


def test_a_vocabulary_of_1e18_is_refused():
    err = refusal(with_fields(LLAMA_3_1_8B.config, vocab_size=10**18))

    assert err.kind is HubErrorKind.TOO_LARGE
    assert "vocab_size is 1000000000000000000" in str(err) and f"{MAX_VOCAB:,}" in str(err)


@pytest.mark.parametrize(
    ("field", "value"),
    [("hidden_size", 10**200), ("num_hidden_layers", 1e300), ("intermediate_size", 10**40),
     ("num_attention_heads", 2**70)],
)
def test_a_huge_number_is_a_clear_error_naming_the_model_and_field(field, value):
    err = refusal(with_fields(LLAMA_3_1_8B.config, **{field: value}))

    assert err.kind is HubErrorKind.TOO_LARGE
    assert f"config.json of acme/model: {field} is" in str(err)
    assert len(str(err)) < 400


@pytest.mark.parametrize(
    ("config", "field"),
    [(GPT2.config, "n_embd"), (GPT2.config, "n_positions"), (BLOOM_560M.config, "n_layer"),
     (GPT_J_6B.config, "n_inner"), (OPT_125M.config, "ffn_dim"),
     (OPT_125M.config, "max_position_embeddings"), (FALCON_40B.config, "num_kv_heads")],
    ids=lambda v: v if isinstance(v, str) else v["model_type"],
)
def test_an_older_familys_own_field_name_is_bounded_too(config, field):
    err = refusal(with_fields(config, **{field: 10**9}))

    assert err.kind is HubErrorKind.TOO_LARGE
    assert f"config.json of acme/model: {field} is" in str(err)


@pytest.mark.parametrize("value", [-4, 12.5, "12"])
def test_an_older_familys_head_count_that_is_not_a_whole_number_is_malformed(value):
    err = refusal(with_fields(GPT2.config, n_head=value))

    assert err.kind is HubErrorKind.MALFORMED and "n_head must be a whole number" in str(err)


def test_experts_beyond_any_model_are_refused():
    err = refusal(with_fields(QWEN3_30B_A3B.config, num_experts=10**9))

    assert err.kind is HubErrorKind.TOO_LARGE and "num_experts" in str(err)


def test_sizes_each_within_bounds_but_too_many_parameters_together_are_refused():
    config = with_fields(
        QWEN3_30B_A3B.config, num_hidden_layers=MAX_LAYERS, hidden_size=65_536,
        num_experts=8_192, moe_intermediate_size=65_536,
    )

    err = refusal(config)

    assert err.kind is HubErrorKind.TOO_LARGE
    assert f"up to {MAX_PARAMS / 1e12:,.0f} T" in str(err)


def test_an_infinite_size_is_malformed_not_a_traceback():
    err = refusal(with_fields(LLAMA_3_1_8B.config, hidden_size=float("inf")))

    assert err.kind is HubErrorKind.MALFORMED and "hidden_size must be a whole number" in str(err)


def test_more_key_value_heads_than_heads_is_an_impossible_model():
    err = refusal(with_fields(LLAMA_3_1_8B.config, num_key_value_heads=64))

    assert err.kind is HubErrorKind.MALFORMED and "impossible model" in str(err)
    assert "key/value heads do not divide 32 attention heads" in str(err)


def test_more_experts_per_token_than_experts_is_an_impossible_model():
    err = refusal(with_fields(QWEN3_30B_A3B.config, num_experts_per_tok=200))

    assert err.kind is HubErrorKind.MALFORMED and "200 experts per token of 128" in str(err)


def test_a_per_layer_list_longer_than_any_model_is_refused():
    err = refusal(with_fields(QWEN3_30B_A3B.config, mlp_only_layers=list(range(5_000))))

    assert err.kind is HubErrorKind.TOO_LARGE and "mlp_only_layers" in str(err)


# -- per-layer layouts by arithmetic --------------------------------------------------


def _brute_force(layers: int, is_moe: Any) -> tuple[int, bool]:
    dense = [i for i in range(layers) if not is_moe(i)]
    return len(dense), dense == list(range(len(dense)))


@pytest.mark.parametrize(
    ("layers", "step", "only"),
    [(L, s, o) for L, s, o in itertools.product(
        [1, 2, 7, 24, 48], [1, 2, 3, 5], [(), (0,), (5, 17), (0, 1, 2), (1, 3, 99)]
    )],
)
def test_qwen_moe_layout_matches_transformers_rule_layer_by_layer(layers, step, only):
    rule = _brute_force(layers, lambda i: i not in only and (i + 1) % step == 0)

    assert qwen_moe_layers(layers, step, set(only)) == rule


@pytest.mark.parametrize(
    ("layers", "first", "freq"),
    list(itertools.product([1, 3, 10, 61], [0, 1, 3, 12, 70], [1, 2, 3])),
)
def test_deepseek_moe_layout_matches_transformers_rule_layer_by_layer(layers, first, freq):
    rule = _brute_force(layers, lambda i: i >= first and i % freq == 0)

    assert deepseek_moe_layers(layers, first, freq) == rule


def test_mlp_width_groups_builds_no_per_layer_list():
    arch = Architecture(
        hidden_size=8, num_layers=10**12, num_heads=1, num_kv_heads=1,
        intermediate_size=32, vocab_size=16,
        moe=MoE(num_experts=4, experts_per_token=2, expert_intermediate_size=8,
                first_dense_layers=3),
    )

    assert arch.mlp_width_groups == ((32, 3), (16, 10**12 - 3))


# -- over HTTP: cached, and the cross-check ---------------------------------------------


async def test_a_refused_size_is_cached_as_a_negative_answer(hub):
    hub.add("acme/deep", with_fields(QWEN1_5_MOE_A2_7B.config, num_hidden_layers=10**8))
    resolver = resolver_for(hub)
    first = await _failure(resolver, "acme/deep")

    second = await _failure(resolver, "acme/deep")

    assert first.kind is second.kind is HubErrorKind.TOO_LARGE
    assert str(second) == str(first)
    assert len([h for h in hub.hits() if h.path.endswith("config.json")]) == 1


async def test_an_integer_of_5000_digits_is_malformed_and_cached(hub):
    hub.add("acme/digits", '{"model_type": "llama", "hidden_size": 1' + "0" * 5000 + "}")
    resolver = resolver_for(hub)

    err = await _failure(resolver, "acme/digits")
    await _failure(resolver, "acme/digits")

    assert err.kind is HubErrorKind.MALFORMED
    assert "config.json of acme/digits is not valid JSON (a number in it has more" in str(err)
    assert len(hub.hits()) == 1


@pytest.mark.parametrize("total", [float("inf"), 10**400])
async def test_an_impossible_index_total_size_skips_the_check_and_says_why(hub, total):
    hub.add("acme/bigindex", LLAMA_3_1_8B.config, index=index_json(0) | {
        "metadata": {"total_size": total}})

    spec = await resolver_for(hub).resolve("acme/bigindex")

    assert spec.hub is not None and spec.hub.checkpoint_params is None
    assert "total_size" in spec.hub.check_skipped
    assert "more than any real checkpoint holds" in spec.hub.check_skipped
    assert spec.params == pytest.approx(8.03e9, rel=0.01)


async def test_a_tensor_shape_of_1e200_squared_skips_the_check(hub):
    hub.add("acme/bigshape", LLAMA_3_2_1B.config,
            safetensors=safetensors_bytes({"model.embed_tokens.weight": [10**200, 10**200]}))

    spec = await resolver_for(hub).resolve("acme/bigshape")

    assert spec.hub is not None and spec.hub.checkpoint_params is None
    assert "more than any real model has" in spec.hub.check_skipped


# -- echoed values are capped ------------------------------------------------------------


def test_a_5000_character_model_type_is_echoed_in_80_characters():
    err = refusal({"model_type": "x" * 5000})

    assert err.kind is HubErrorKind.UNSUPPORTED
    assert "x" * (ECHO_CHARS - 1) + "…" in str(err) and "x" * ECHO_CHARS not in str(err)
    assert len(str(err)) <= len(str(refusal({"model_type": "x"}))) + ECHO_CHARS


def test_shown_caps_long_text_and_survives_integers_python_cannot_print():
    assert shown("a" * 200) == "a" * (ECHO_CHARS - 1) + "…"
    assert shown("short") == "short"
    assert shown(10**5000) == "a number of over 4,300 digits"


async def _failure(resolver: HubResolver, ref: str) -> HubError:
    with pytest.raises(HubError) as info:
        await resolver.resolve(ref)
    return info.value
