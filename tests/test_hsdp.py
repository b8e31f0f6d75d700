"""Hybrid sharding (``hsdp``, FSDP's HYBRID_SHARD): sharded within a node, replicated
across nodes, the replicas all-reducing their gradient shards once per step."""

from __future__ import annotations

import pytest

from engine import Request, estimate
from engine.choices import Sharding
from engine.collectives import data_parallel_seconds
from engine.fit import Sizer
from engine.profiles import resolve
from engine.specs import Catalog
from engine.throughput import step_time
from engine.workload import workload
from tests.helpers import H100_LIKE, catalog_with, resolved_footprint

CARD = H100_LIKE
FULL_8B = {"model": "llama-3.1-8b", "method": "full", "seq_len": 4096}


def test_within_one_node_it_shards_like_fsdp(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_8B)
    for count in (2, 4, 8):
        assert fp.per_gpu(Sharding.HSDP, count).total == pytest.approx(
            fp.per_gpu(Sharding.FSDP, count).total
        )


def test_past_one_node_it_holds_one_nodes_shard(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_8B)
    assert fp.per_gpu(Sharding.HSDP, 64).total == pytest.approx(
        fp.per_gpu(Sharding.FSDP, 8).total
    )
    assert fp.per_gpu(Sharding.HSDP, 64).total > fp.per_gpu(Sharding.FSDP, 64).total


def test_under_tensor_parallel_the_shard_group_is_a_nodes_groups(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_8B, tensor_parallel=2)
    assert fp.shard_ranks(Sharding.HSDP, 64) == 4
    assert fp.shard_ranks(Sharding.FSDP, 64) == 32


def test_a_run_one_node_cannot_hold_fits_no_count(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, model="llama-3.1-70b", method="full", seq_len=4096)
    assert Sizer(fp, Sharding.HSDP, offload=False).fewest(CARD) is None
    assert Sizer(fp, Sharding.FSDP, offload=False).fewest(CARD) is not None


def test_sizing_agrees_with_the_footprint_past_one_node(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_8B)
    found = Sizer(fp, Sharding.HSDP, offload=False).at_count_for(1e9, 32)
    assert found is not None
    assert found[2] == pytest.approx(fp.per_gpu(Sharding.HSDP, 32).total)


def _rate(catalog: Catalog, stage: Sharding, count: int) -> float:
    request = resolve(Request(**{**FULL_8B, "seq_len": 512}, sharding=stage))
    work = workload(catalog.model(request.model).architecture, request)
    return step_time(work, CARD, count, stage, offload=False).tokens_per_second


def test_gathers_stay_on_the_node_so_it_outruns_fsdp_across_nodes(catalog: Catalog) -> None:
    assert _rate(catalog, Sharding.HSDP, 32) > _rate(catalog, Sharding.FSDP, 32)


def test_the_replicas_all_reduce_costs_time_across_nodes(catalog: Catalog) -> None:
    request = resolve(Request(**FULL_8B, sharding=Sharding.HSDP))
    work = workload(catalog.model(request.model).architecture, request)
    one_node = step_time(work, CARD, 8, Sharding.HSDP, offload=False)
    four = step_time(work, CARD, 32, Sharding.HSDP, offload=False)
    assert one_node.comm_s < four.comm_s


def test_the_estimate_names_hsdp_and_keeps_it() -> None:
    est = estimate(Request(**FULL_8B, sharding=Sharding.HSDP, gpu="g80", gpu_count=16,
                           dataset_tokens=10**8), catalog_with(CARD))
    assert est.options[0].stage is Sharding.HSDP
    assert any("sharding hsdp" in a for a in est.assumptions)


def test_the_band_says_no_published_run_used_hybrid_sharding() -> None:
    est = estimate(Request(**FULL_8B, sharding=Sharding.HSDP, gpu="g80", gpu_count=16),
                   catalog_with(CARD))
    assert est.uncertainty is not None and "hybrid sharding" in est.uncertainty.basis


def test_the_shard_group_is_the_nodes_cards_the_query_names(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_8B, gpu_count=8, nodes=2)
    assert fp.shard_ranks(Sharding.HSDP, 8) == 4
    assert fp.per_gpu(Sharding.HSDP, 8).total == pytest.approx(
        fp.per_gpu(Sharding.FSDP, 4).total
    )


def test_the_time_model_shards_over_the_named_nodes_cards(catalog: Catalog) -> None:
    request = resolve(Request(**FULL_8B, sharding=Sharding.HSDP))
    work = workload(catalog.model(request.model).architecture, request)
    two_nodes = step_time(work, CARD, 8, Sharding.HSDP, offload=False, nodes=2)
    one_node = step_time(work, CARD, 8, Sharding.HSDP, offload=False)
    assert two_nodes.optimizer_s == pytest.approx(2 * one_node.optimizer_s)


def test_the_assumptions_name_the_nodes_cards() -> None:
    est = estimate(Request(**FULL_8B, sharding=Sharding.HSDP, gpu="g80", gpu_count=8, nodes=2),
                   catalog_with(CARD))
    assert any("sharded within each node of 4" in a for a in est.assumptions)


# A card sold one to a machine (as clouds rent GH200s): a node is one card.
ONE_PER_NODE = H100_LIKE.model_copy(update={"id": "g80-solo", "gpus_per_node": 1})


def test_on_one_card_nodes_every_card_holds_a_whole_replica(catalog: Catalog) -> None:
    est = estimate(Request(**FULL_8B, sharding=Sharding.HSDP, gpu="g80-solo", gpu_count=4),
                   catalog_with(ONE_PER_NODE))
    fp = resolved_footprint(catalog, **FULL_8B, sharding=Sharding.HSDP)
    assert est.options[0].per_gpu_gb == pytest.approx(
        fp.per_gpu(Sharding.FSDP, 1).total, rel=0.01
    )


def test_sizing_stops_at_the_cards_own_node(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_8B)
    sizer = Sizer(fp, Sharding.HSDP, offload=False)
    assert sizer.node_cards_on(ONE_PER_NODE) == 1
    assert sizer.node_cards_on(CARD) == 8


def test_named_nodes_hold_on_every_card(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_8B, gpu_count=8, nodes=2)
    assert fp.on_card(1).node_cards == 4
    assert Sizer(fp, Sharding.HSDP, offload=False).node_cards_on(ONE_PER_NODE) == 4


def test_the_assumptions_name_the_cards_own_node() -> None:
    est = estimate(Request(**FULL_8B, sharding=Sharding.HSDP, gpu="g80-solo", gpu_count=4),
                   catalog_with(ONE_PER_NODE))
    assert any("sharded within each node of 1" in a for a in est.assumptions)


def test_a_replica_too_big_for_the_card_points_to_fsdp() -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", seq_len=4096,
                           sharding=Sharding.HSDP, gpu="g80-solo", gpu_count=4),
                   catalog_with(ONE_PER_NODE))
    assert any("(1 of these 4 g80-solo cards): `fsdp` shards over every one" in w
               for w in est.warnings)


@pytest.mark.parametrize("node", [1, 2, 4, 8])
@pytest.mark.parametrize("count", [1, 2, 3, 4, 6, 8, 12, 16])
def test_sizing_agrees_with_the_breakdown_on_every_node_size(catalog, node, count) -> None:
    fp = resolved_footprint(catalog, **FULL_8B, sharding=Sharding.HSDP).on_card(node)
    found = Sizer(fp, Sharding.HSDP, offload=False).at_count_for(1e9, count, node)
    assert found is not None
    assert found[2] == pytest.approx(fp.per_gpu(found[1], count).total, rel=1e-9)


def test_a_count_past_one_node_splits_evenly_over_the_nodes(catalog: Catalog) -> None:
    # 12 cards on 8-card nodes run as two shard groups of 6, in memory and in time.
    fp = resolved_footprint(catalog, **FULL_8B)
    assert fp.shard_ranks(Sharding.HSDP, 12) == 6
    dp = data_parallel_seconds(CARD, 12, Sharding.HSDP, tp=1, weight_bytes=1e9,
                               grad_bytes=1e9, accumulates=False)
    assert dp.shards == 6


def test_named_nodes_set_the_shard_group_in_memory_and_in_time(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_8B, gpu_count=16, nodes=2).on_card(1)
    dp = data_parallel_seconds(ONE_PER_NODE, 16, Sharding.HSDP, tp=1, weight_bytes=1e9,
                               grad_bytes=1e9, accumulates=False, nodes=2)
    assert fp.shard_ranks(Sharding.HSDP, 16) == dp.shards == 8


def test_context_parallel_rings_fit_on_one_card_nodes() -> None:
    request = Request(model="llama-3.1-8b", method="lora", seq_len=32768, context_parallel=2,
                      sharding=Sharding.HSDP, dataset_tokens=10**7)
    est = estimate(request, catalog_with(ONE_PER_NODE))
    assert est.options and est.options[0].count == 2


def test_napkin_hsdp_on_one_card_nodes_divides_nothing(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, model="llama-3.1-8b", method="full", mode="napkin",
                            sharding=Sharding.HSDP).on_card(1)
    sizer = Sizer(fp, Sharding.HSDP, offload=False)
    found = sizer.at_count_for(1e9, 2, 1)
    assert found is not None and found[2] == pytest.approx(fp.total)
    assert sizer.fewest_for(fp.total / 2, node_cards=1) is None


def test_napkin_mode_shards_over_the_named_nodes_groups(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, model="llama-3.1-8b", method="full", mode="napkin",
                            gpu_count=16, nodes=2).on_card(1)
    assert fp.shard_ranks(Sharding.HSDP, 16) == 8
    assert fp.per_gpu(Sharding.HSDP, 16).total == pytest.approx(fp.total / 8)


def test_on_named_nodes_the_fewest_count_grows_the_groups() -> None:
    # Two nodes of one card cannot hold an 8B full fine-tune; two nodes of two can.
    est = estimate(Request(**FULL_8B, sharding=Sharding.HSDP, gpu="g80", gpu_count=2,
                           nodes=2), catalog_with(CARD))
    assert est.options[0].needed == 4


def test_on_named_nodes_the_groups_grow_no_further_than_a_node_of_the_card() -> None:
    # One 8-card node cannot hold a 70B full fine-tune's shard: more cards would need
    # bigger nodes than the card comes in, so no count of it holds the run under hsdp.
    est = estimate(Request(model="llama-3.1-70b", method="full", sharding=Sharding.HSDP,
                           gpu="g80", gpu_count=16, nodes=2), catalog_with(CARD))
    assert not est.options[0].fits and est.options[0].needed is None


def test_a_count_the_groups_do_not_divide_is_flagged() -> None:
    request = Request(**FULL_8B, sharding=Sharding.HSDP, gpu="g80", gpu_count=13)
    est = estimate(request, catalog_with(CARD))
    assert any("13 cards leave 1 over groups of 6" in w and "(12 or 18)" in w
               for w in est.warnings)
    even = estimate(request.model_copy(update={"gpu_count": 12}), catalog_with(CARD))
    assert not any("equal shard groups" in w for w in even.warnings)


def test_named_replicas_each_get_a_card_even_when_one_card_holds_the_run() -> None:
    request = Request(model="llama-3.1-8b", method="lora", sharding=Sharding.HSDP, nodes=2)
    est = estimate(request, catalog_with(CARD))
    assert est.options[0].count == 2


def test_napkin_mode_sizes_each_named_replica_as_a_whole_group(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, model="llama-3.1-70b", method="full", mode="napkin",
                            sharding=Sharding.HSDP, nodes=2)
    found = Sizer(fp, Sharding.HSDP, offload=False).fewest_for(fp.total / 3.5, node_cards=8)
    assert found is not None
    count, _, per_gpu = found
    assert count == 8 and per_gpu == pytest.approx(fp.total / 4)


def test_fewest_cards_for_replicas_steps_back_a_card_on_every_replica() -> None:
    request = Request(**FULL_8B, sharding=Sharding.HSDP, gpu="g80", nodes=2, solve="gpu_count")
    solution = estimate(request, catalog_with(CARD)).solution
    assert solution is not None and isinstance(solution.value, int)
    assert solution.value % 2 == 0
    assert solution.next_value is None or solution.next_value == solution.value - 2


def test_replicas_with_context_parallel_rings_hold_whole_rings_each() -> None:
    request = Request(model="llama-3.1-8b", method="full", seq_len=32768, context_parallel=2,
                      sharding=Sharding.HSDP, nodes=2, gpu="g80")
    count = estimate(request, catalog_with(CARD)).options[0].count
    assert count % 4 == 0  # two replicas, each of whole rings of 2
