"""Context parallelism (``cp``): a ring of cards splits every sequence; each stores and
computes its share of the tokens, the weights are sharded over the ring too, and keys
and values go round the ring beside attention."""

from __future__ import annotations

from dataclasses import replace

import pytest

from adapters.parse import QueryError, apply_followup, parse_query
from adapters.report import build_report
from adapters.trainconfig import ConfigError, read_config
from adapters.trainconfig.build import apply_config
from catalog.loader import default_catalog
from engine import Request, estimate
from engine.activations import activation_bytes
from engine.choices import Sharding
from engine.collectives import cp_comm_bytes
from engine.constants import GB
from engine.fit import Sizer
from engine.profiles import resolve
from engine.specs import Catalog
from engine.throughput import step_time
from engine.workload import workload
from tests.helpers import H100_LIKE, catalog_with, resolved_footprint

CARD = H100_LIKE
LONG = {"model": "llama-3.1-8b", "method": "full", "seq_len": 65536}
CAT = default_catalog()


def test_each_card_stores_the_activations_of_its_share_of_the_tokens(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    ring = resolved_footprint(catalog, **LONG, context_parallel=4)
    shard = resolve(Request(**{**LONG, "seq_len": 65536 // 4}))
    assert ring.activations == pytest.approx(activation_bytes(arch, shard) / GB)


def test_the_model_state_is_not_split_by_the_ring_alone(catalog: Catalog) -> None:
    whole = resolved_footprint(catalog, **LONG)
    ring = resolved_footprint(catalog, **LONG, context_parallel=4)
    assert ring.base_weights == pytest.approx(whole.base_weights)
    assert ring.optimizer == pytest.approx(whole.optimizer)


def test_card_counts_are_whole_rings(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **LONG, context_parallel=4)
    sizer = Sizer(fp, Sharding.FSDP, offload=False)
    found = sizer.fewest(CARD)
    assert found is not None and found[0] % 4 == 0
    assert sizer.at_count(CARD, 6) is None


def test_the_ring_shards_the_weights_under_auto_sharding() -> None:
    est = estimate(Request(**LONG, context_parallel=4, gpu="g80", gpu_count=4),
                   catalog_with(CARD))
    assert est.options[0].stage is Sharding.ZERO3


def test_each_card_computes_its_share_of_the_tokens(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    one = workload(arch, resolve(Request(**LONG)))
    four = workload(arch, resolve(Request(**LONG, context_parallel=4)))
    assert four.tokens == one.tokens
    assert four.matmul_flops == pytest.approx(one.matmul_flops / 4)
    assert four.attention_flops == pytest.approx(one.attention_flops / 4)
    assert four.weight_bytes == pytest.approx(one.weight_bytes)


def test_tokens_per_second_are_per_card_of_the_ring(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    work = workload(arch, resolve(Request(**LONG, context_parallel=4)))
    step = step_time(work, CARD, 4, Sharding.NONE, offload=False)
    assert step.tokens_per_step == pytest.approx(work.tokens / 4)


def test_keys_and_values_go_round_the_ring_three_times_per_pass(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    request = Request(**LONG, context_parallel=4, grad_checkpointing=False)
    kv = 1000 * 2 * arch.kv_width * 2
    assert cp_comm_bytes(arch, request, 1000) == pytest.approx(3 * arch.num_layers * kv * 3 / 4)


def test_the_ring_waits_only_for_what_attention_does_not_hide(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    work = workload(arch, resolve(Request(**LONG, context_parallel=4)))
    hidden = step_time(work, CARD, 4, Sharding.NONE, offload=False)
    none = step_time(replace(work, cp_comm_bytes=0.0), CARD, 4, Sharding.NONE, offload=False)
    assert hidden.step_s == pytest.approx(none.step_s)  # 64k tokens: attention hides it
    slow = replace(work, cp_comm_bytes=work.cp_comm_bytes * 1000)
    assert step_time(slow, CARD, 4, Sharding.NONE, offload=False).step_s > none.step_s


def test_the_headline_and_the_band_name_the_ring() -> None:
    est = estimate(Request(**LONG, context_parallel=4, gpu="g80", gpu_count=8),
                   catalog_with(CARD))
    assert "8x G80 in 2 groups of cp 4" in build_report(est).headline
    assert est.uncertainty is not None and "context parallelism" in est.uncertainty.basis


def test_eager_attention_under_a_ring_is_warned_about() -> None:
    est = estimate(Request(**LONG, context_parallel=4, flash_attention=False, gpu="g80",
                           gpu_count=4), catalog_with(CARD))
    assert any("ring attention" in w for w in est.warnings)


@pytest.mark.parametrize("text", [
    "8b full cp 4 8x h100 seq 64k", "8b full context parallel 4 seq 64k 8x h100",
    "8b full context_parallel_degree 4 seq 64k 8x h100",
    "8b full --context-parallel-size 4 seq 64k 8x h100", "8b full cp4 seq 64k 8x h100",
])
def test_context_parallel_words_set_the_degree(text: str) -> None:
    assert parse_query(text, CAT).context_parallel == 4


def test_context_alone_still_means_the_sequence_length() -> None:
    request = parse_query("8b full context 32k h100", CAT)
    assert request.seq_len == 32768 and request.context_parallel == 1


def test_cards_that_do_not_split_into_rings_are_refused() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("8b full cp 3 8x h100 seq 32k", CAT)
    assert "do not split into context-parallel rings of 3" in caught.value.message


def test_rings_of_tensor_parallel_groups_count_both() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("8b full cp 4 tp 4 8x h100 seq 32k", CAT)
    assert "multiple of 16 cards" in caught.value.message


def test_a_degree_past_the_sequence_length_is_refused() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("8b full cp 8 seq 4", CAT)
    assert "use a degree up to the sequence length" in caught.value.message


def test_a_followup_drops_the_ring() -> None:
    previous = parse_query("8b full cp 4 8x h100 seq 64k", CAT)
    assert apply_followup(previous, "no cp", CAT).context_parallel == 1


AXOLOTL = ("base_model: meta-llama/Llama-3.1-8B\nsequence_len: 65536\n"
           "context_parallel_size: 4\nfsdp_version: 2\nfsdp:\n  - full_shard\n")


def test_axolotl_context_parallel_size_sets_the_degree() -> None:
    assert read_config(AXOLOTL).fields["context_parallel"] == 4


def test_axolotls_older_sequence_parallel_degree_sets_it_too() -> None:
    text = AXOLOTL.replace("context_parallel_size", "sequence_parallel_degree")
    assert read_config(text).fields["context_parallel"] == 4


def test_a_config_degree_the_cards_do_not_divide_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="axolotl config, context_parallel_size 4: 6 cards"):
        apply_config(read_config(AXOLOTL), parse_query("llama-3.1-8b 6x h100", CAT))


def test_fewest_cards_question_steps_by_whole_rings() -> None:
    est = estimate(Request(**LONG, context_parallel=4, solve="gpu_count", gpu="g80"),
                   catalog_with(CARD))
    assert est.solution is not None
    found = est.solution.to_json()
    assert found["value"] % 4 == 0
    assert found["next_does_not_fit"] in (None, found["value"] - 4)


def test_a_budget_tries_only_whole_rings() -> None:
    est = estimate(Request(**LONG, context_parallel=4, gpu="g80", dataset_tokens=10**8,
                           budget_usd=10**6), catalog_with(CARD))
    assert est.options and all(o.count % 4 == 0 for o in est.options)


def test_auto_shards_a_named_count_under_context_parallelism(catalog) -> None:
    """`auto` shards over the rings from the first, whether the count is named or picked."""
    from engine import Request, estimate
    from engine.choices import Sharding

    fields = dict(model="llama-3.1-8b", method="lora", framework="hf", gpu="h100-sxm",
                  seq_len=32768, context_parallel=2)
    picked = estimate(Request(**fields), catalog).options[0]
    named = estimate(Request(**fields, gpu_count=picked.count), catalog).options[0]
    assert named.stage is picked.stage is Sharding.ZERO3
    assert named.per_gpu_gb == picked.per_gpu_gb


def test_the_fit_line_says_auto_shards_over_the_rings(catalog) -> None:
    from engine import Request, estimate

    est = estimate(Request(model="llama-3.1-8b", method="lora", gpu="h100-sxm", gpu_count=4,
                           context_parallel=2, dataset_tokens=10**7), catalog)
    line = next(a for a in est.assumptions if a.startswith("Fit:"))
    assert "ZeRO-3 over the rings' cards" in line and "DDP replicas" not in line
