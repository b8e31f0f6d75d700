"""The physical time model: what a micro-batch computes, moves and waits for."""

from __future__ import annotations

import pytest

from engine import Request, estimate
from engine.choices import Mode, Sharding
from engine.collectives import link_bytes_per_s, nodes_for
from engine.compute import compute, napkin_gpu_hours, timing
from engine.constants import (
    DEFAULT_MFU,
    INTERNODE_GBPS,
    NO_P2P_FACTOR,
    RUN_STARTUP_S,
    ZERO3_HOST_OPS_GATHER,
    ZERO3_HOST_OPS_GRADIENT,
)
from engine.profiles import resolve
from engine.specs import Catalog
from engine.throughput import step_time
from engine.workload import fused_step_bytes, workload, zero3_host_ops
from tests.helpers import H100_LIKE, catalog_with, gpu

CARD = H100_LIKE


def rate(catalog: Catalog, card=CARD, count: int = 1, stage=Sharding.NONE, **fields) -> float:
    """Tokens/s per GPU of a request on ``card``."""
    request = resolve(Request(**{"model": "llama-3.1-8b", "method": "lora", **fields}))
    work = workload(catalog.model(request.model).architecture, request)
    return step_time(work, card, count, stage, request.offload).tokens_per_second


def test_lora_is_faster_per_token_than_full_because_frozen_weights_need_no_weight_gradient(
    catalog: Catalog,
) -> None:
    lora = rate(catalog, method="lora", micro_batch=4)
    full = rate(catalog, method="full", micro_batch=4)
    assert 1.2 < lora / full < 1.6


def test_qlora_is_slower_than_lora_by_its_dequantization(catalog: Catalog) -> None:
    assert rate(catalog, method="qlora") < rate(catalog, method="lora")


def test_torchtune_qlora_without_compile_moves_torchaos_unfused_dequantization(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    eager = resolve(Request(model="llama-3.1-8b", method="qlora", framework="torchtune"))
    compiled = eager.model_copy(update={"compile": True})
    slow, fast = workload(arch, eager), workload(arch, compiled)
    passes = 3  # forward, recomputed forward, backward (checkpointing is on)
    assert slow.dequant_bytes == pytest.approx(passes * 33 * arch.linear_params)
    assert fast.dequant_bytes == pytest.approx(passes * 2.5 * arch.linear_params)
    assert slow.kernels - fast.kernels > passes * 14 * arch.decoder_matrices


def test_uncompiled_torchtune_qlora_is_several_times_slower_on_short_batches(
    catalog: Catalog,
) -> None:
    # torchtune's QLoRA tutorial: about 1.15 it/s eager, 3.95 it/s compiled (RTX 4090).
    eager = rate(catalog, framework="torchtune", method="qlora", seq_len=350, micro_batch=2)
    compiled = rate(catalog, framework="torchtune", method="qlora", seq_len=350,
                    micro_batch=2, compile=True)
    assert 2.5 < compiled / eager < 5


def test_attention_flops_per_token_grow_with_sequence(catalog: Catalog) -> None:
    arch = catalog.model("qwen2.5-0.5b").architecture
    short = workload(arch, Request(model="qwen2.5-0.5b", seq_len=2048, micro_batch=8))
    long = workload(arch, Request(model="qwen2.5-0.5b", seq_len=16384, micro_batch=1))
    assert long.tokens == short.tokens
    assert long.attention_flops == pytest.approx(8 * short.attention_flops)


def test_long_sequences_are_slower_per_token_from_attention(catalog: Catalog) -> None:
    short = rate(catalog, seq_len=2048, micro_batch=8)
    long = rate(catalog, seq_len=16384, micro_batch=1)
    assert long < 0.8 * short


def test_small_micro_batches_are_slower_per_token(catalog: Catalog) -> None:
    one = rate(catalog, model="qwen2.5-0.5b", seq_len=256, micro_batch=1)
    many = rate(catalog, model="qwen2.5-0.5b", seq_len=256, micro_batch=32)
    assert one < 0.5 * many


def test_checkpointing_costs_a_second_forward(catalog: Catalog) -> None:
    on = rate(catalog, method="full", micro_batch=4, grad_checkpointing=True)
    off = rate(catalog, method="full", micro_batch=4, grad_checkpointing=False)
    assert 0.7 < on / off < 0.85


def test_a_faster_matmul_rate_is_faster(catalog: Catalog) -> None:
    slow = CARD.model_copy(update={"matmul_tflops": 400.0})
    assert rate(catalog, card=slow, micro_batch=8) < rate(catalog, micro_batch=8)


def test_without_peer_to_peer_the_link_is_halved() -> None:
    p2p = link_bytes_per_s(CARD, 2, 1)
    no_p2p = link_bytes_per_s(CARD.model_copy(update={"p2p": False}), 2, 1)
    assert no_p2p == pytest.approx(p2p * NO_P2P_FACTOR)


def test_between_nodes_a_ring_crosses_on_the_nics_of_its_cards_on_each_node() -> None:
    assert nodes_for(16) == 2 and nodes_for(8) == 1
    nic = INTERNODE_GBPS["nvlink"] * 1e9
    assert link_bytes_per_s(CARD, 4, 2) == pytest.approx(2 * nic)
    assert link_bytes_per_s(CARD, 16, 2) == pytest.approx(min(8 * nic, CARD.link_gbps * 1e9))


def test_a_ring_with_one_card_per_node_crosses_on_that_cards_nic() -> None:
    assert link_bytes_per_s(CARD, 4, 4) == pytest.approx(INTERNODE_GBPS["nvlink"] * 1e9)


def test_pcie_servers_cross_between_nodes_on_the_nodes_one_nic() -> None:
    pcie = CARD.model_copy(update={"fabric": "pcie", "link_gbps": 32.0})
    assert link_bytes_per_s(pcie, 16, 2) == pytest.approx(INTERNODE_GBPS["pcie"] * 1e9)


def test_two_full_nodes_under_fsdp_run_about_as_fast_per_card_as_one(catalog: Catalog) -> None:
    one = rate(catalog, method="full", count=8, stage=Sharding.ZERO3)
    two = rate(catalog, method="full", count=16, stage=Sharding.ZERO3)
    assert two > 0.9 * one


def test_zero3_on_a_slow_link_is_bound_by_communication(catalog: Catalog) -> None:
    slow = CARD.model_copy(update={"link_gbps": 10.0, "fabric": "pcie"})
    fast = rate(catalog, method="full", card=CARD, count=4, stage=Sharding.ZERO3)
    assert rate(catalog, method="full", card=slow, count=4, stage=Sharding.ZERO3) < 0.5 * fast


def test_checkpointing_never_shortens_a_communication_bound_accumulating_step(
    catalog: Catalog,
) -> None:
    """The step's last reduction overlaps only the link's idle time in the backward: more
    compute under a busy link (FSDP's gathers) must not hide more of it."""
    hours = []
    for ckpt in (False, True):
        request = Request(model="llama-3.2-1b", method="full", seq_len=256, grad_accum=8,
                          sharding="fsdp", gpu="l4", gpu_count=4, dataset_tokens=1_000_000,
                          grad_checkpointing=ckpt)
        timed = estimate(request, catalog).options[0].timing
        assert timed.gpu_hours is not None
        hours.append(timed.gpu_hours)
    assert hours[1] >= hours[0]


def test_cpu_offload_adds_host_time_per_step(catalog: Catalog) -> None:
    on = rate(catalog, method="full", offload=True, count=2, stage=Sharding.ZERO3, micro_batch=4)
    off = rate(catalog, method="full", count=2, stage=Sharding.ZERO3, micro_batch=4)
    assert on < off


def test_gpu_hours_are_trained_tokens_over_the_modeled_rate(catalog: Catalog) -> None:
    request = Request(model="llama-3.1-8b", method="lora", dataset_tokens=10**7, epochs=1)
    work = compute(catalog.model(request.model).active_params, request,
                   catalog.model(request.model).architecture)
    t = timing(work, CARD, 1, 2.0, Mode.DETAILED)
    assert t.tokens_per_second is not None and t.gpu_hours is not None
    assert t.gpu_hours == pytest.approx(1e7 / t.tokens_per_second / 3600 + RUN_STARTUP_S / 3600)
    assert t.cost_usd == pytest.approx(t.gpu_hours * 2.0)


def test_napkin_mode_keeps_six_p_t_at_35_percent(catalog: Catalog) -> None:
    cat = catalog_with(CARD)
    request = Request(model="llama-3.1-8b", method="qlora", dataset_tokens=10**8, epochs=1,
                      mode="napkin")
    option = estimate(request, cat).options[0]
    params = catalog.model("llama-3.1-8b").active_params
    expected = 6 * params * 1e8 / (1000e12 * DEFAULT_MFU) / 3600
    assert option.timing.gpu_hours == pytest.approx(expected)


def test_the_detailed_reply_carries_the_napkin_gpu_hours_beside_its_own(catalog: Catalog) -> None:
    cat = catalog_with(CARD)
    request = Request(model="llama-3.1-8b", method="qlora", dataset_tokens=10**8, epochs=1)
    t = estimate(request, cat).options[0].timing
    flops = 6 * catalog.model("llama-3.1-8b").active_params * 1e8
    assert t.napkin_gpu_hours == pytest.approx(napkin_gpu_hours(flops, CARD))
    assert t.gpu_hours != pytest.approx(t.napkin_gpu_hours)


def test_a_stated_mfu_uses_the_flat_rule(catalog: Catalog) -> None:
    cat = catalog_with(CARD)
    request = Request(model="llama-3.1-8b", method="lora", dataset_tokens=10**8, epochs=1,
                      mfu=0.5, grad_checkpointing=False)
    option = estimate(request, cat).options[0]
    expected = 6 * catalog.model("llama-3.1-8b").active_params * 1e8 / (1000e12 * 0.5) / 3600
    startup = option.count * RUN_STARTUP_S / 3600  # loading, as the physical model adds
    assert option.timing.gpu_hours == pytest.approx(expected + startup)


def test_the_same_card_spans_a_wide_range_of_tokens_per_second(catalog: Catalog) -> None:
    rates = [
        rate(catalog, model="qwen2.5-0.5b", seq_len=s, micro_batch=b)
        for s, b in ((256, 1), (2048, 8), (16384, 1))
    ]
    assert max(rates) / min(rates) > 3


def test_every_card_pays_the_start_up_so_hundreds_of_cards_cost_more(catalog: Catalog) -> None:
    request = Request(model="llama-3.1-8b", method="lora", dataset_tokens=10**7, epochs=1)
    model = catalog.model(request.model)
    work = compute(model.active_params, request, model.architecture)
    one = timing(work, CARD, 1, 2.0, Mode.DETAILED)
    many = timing(work, CARD, 256, 2.0, Mode.DETAILED, Sharding.ZERO3)
    assert many.cost_usd is not None and one.cost_usd is not None
    assert many.cost_usd > 10 * one.cost_usd
    assert many.wall_hours is not None and many.wall_hours > RUN_STARTUP_S / 3600


def _step(catalog: Catalog, count: int = 1, stage=Sharding.NONE, **fields):
    request = resolve(Request(**{"model": "llama-3.1-8b", **fields}))
    work = workload(catalog.model(request.model).architecture, request)
    return step_time(work, CARD, count, stage, request.offload)


def test_hf_steps_adamw_unfused_three_times_the_traffic_of_a_fused_step(catalog: Catalog) -> None:
    hf = _step(catalog, method="full", framework="hf")
    generic = _step(catalog, method="full", framework="generic")
    assert hf.optimizer_s == pytest.approx(3 * generic.optimizer_s)


def test_under_deepspeed_zero_the_hf_step_is_fused(catalog: Catalog) -> None:
    zero = _step(catalog, count=8, stage=Sharding.ZERO2, method="full", framework="hf")
    generic = _step(catalog, count=8, stage=Sharding.ZERO2, method="full", framework="generic")
    assert zero.optimizer_s == pytest.approx(generic.optimizer_s)


def test_fused_adamw_said_outright_is_fused_under_hf(catalog: Catalog) -> None:
    fused = _step(catalog, method="full", framework="hf", optimizer="adamw-fused")
    generic = _step(catalog, method="full", framework="generic")
    assert fused.optimizer_s == pytest.approx(generic.optimizer_s)


def test_an_eight_bit_optimizer_is_not_counted_as_unfused_adamw(catalog: Catalog) -> None:
    eight = _step(catalog, method="full", framework="hf", optimizer="adamw-8bit")
    generic = _step(catalog, method="full", framework="generic", optimizer="adamw-8bit")
    assert eight.optimizer_s == pytest.approx(generic.optimizer_s)


def test_unpacked_samples_run_at_their_average_length_not_the_limit(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    samples = Request(
        model="llama-3.1-8b", seq_len=2048, micro_batch=4, samples=10_000, sample_tokens=300
    )
    assert workload(arch, samples).tokens == 4 * 300


def test_packed_samples_run_at_the_full_sequence(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    packed = Request(
        model="llama-3.1-8b", seq_len=2048, micro_batch=4, samples=10_000, sample_tokens=300,
        packing=True,
    )
    assert workload(arch, packed).tokens == 4 * 2048


def test_samples_longer_than_the_limit_run_at_the_limit(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    cut = Request(
        model="llama-3.1-8b", seq_len=2048, micro_batch=2, samples=10_000, sample_tokens=4000,
        max_len=1024,
    )
    assert workload(arch, cut).tokens == 2 * 1024


def test_memory_still_follows_the_limit_when_samples_are_shorter(catalog: Catalog) -> None:
    base = {"model": "llama-3.1-8b", "method": "lora", "seq_len": 4096, "micro_batch": 4}
    short = estimate(Request(**base, samples=10_000, sample_tokens=300), catalog)
    full = estimate(Request(**base), catalog)
    assert short.options[0].per_gpu_gb == pytest.approx(full.options[0].per_gpu_gb)


def test_deepspeed_zero3_hooks_add_host_time_per_weight_matrix(catalog: Catalog) -> None:
    small = {"model": "qwen2.5-0.5b", "method": "full", "seq_len": 256, "micro_batch": 1}
    hf = _step(catalog, count=1, stage=Sharding.ZERO3, framework="hf", **small)
    torchtune = _step(catalog, count=1, stage=Sharding.ZERO3, framework="torchtune", **small)
    assert hf.launch_floor_s > 1.5 * torchtune.launch_floor_s


def test_zero3_hooks_cost_nothing_without_zero3(catalog: Catalog) -> None:
    small = {"model": "qwen2.5-0.5b", "method": "full", "seq_len": 256, "micro_batch": 1}
    hf = _step(catalog, count=1, stage=Sharding.NONE, framework="hf", **small)
    torchtune = _step(catalog, count=1, stage=Sharding.NONE, framework="torchtune", **small)
    assert hf.launch_floor_s == pytest.approx(torchtune.launch_floor_s)


def test_zero3_host_time_hides_under_long_sequences(catalog: Catalog) -> None:
    long = {"model": "qwen2.5-0.5b", "method": "full", "seq_len": 16384, "micro_batch": 1}
    step = _step(catalog, count=1, stage=Sharding.ZERO3, framework="hf", **long)
    assert step.compute_s > step.launch_floor_s


def test_zero3_gathers_every_weight_matrix_and_keeps_norms_whole(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    assert arch.weight_matrices == 32 * 7 + 2  # q k v o gate up down, embedding, head
    assert arch.small_tensors == 32 * 2 + 1  # two norms a layer and the final norm


def test_zero3_low_rank_lora_factors_stay_whole_and_pay_only_their_gradient_hook(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    lora = resolve(Request(model="llama-3.1-8b", method="lora", lora_rank=2, framework="hf"))
    factors = 2 * 32 * 7  # A and B of q k v o gate up down: at most 2 x 14,336 < 10 x 4,096
    assert zero3_host_ops(arch, lora) == pytest.approx(
        ZERO3_HOST_OPS_GATHER * arch.weight_matrices + ZERO3_HOST_OPS_GRADIENT * factors
    )


def test_zero3_high_rank_lora_factors_are_gathered_like_weights(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    low = resolve(Request(model="llama-3.1-8b", method="lora", lora_rank=8, framework="hf"))
    high = resolve(Request(model="llama-3.1-8b", method="lora", lora_rank=128, framework="hf"))
    assert zero3_host_ops(arch, high) > zero3_host_ops(arch, low) + 32 * 7 * ZERO3_HOST_OPS_GATHER


def test_a_fused_adamw_step_moves_28_bytes_a_parameter_and_14_in_pure_bf16() -> None:
    assert fused_step_bytes(Request(model="x")) == 28.0
    assert fused_step_bytes(Request(model="x", state_precision="pure-bf16")) == 14.0


def test_smaller_optimizer_states_make_a_cheaper_step(catalog: Catalog) -> None:
    adamw = _step(catalog, method="full", framework="generic")
    eight = _step(catalog, method="full", framework="generic", optimizer="adamw-8bit")
    sgd = _step(catalog, method="full", framework="generic", optimizer="sgd")
    assert sgd.optimizer_s < eight.optimizer_s < adamw.optimizer_s


def _comm(catalog: Catalog, stage: Sharding, accum: int) -> float:
    request = resolve(Request(model="llama-3.1-8b", method="full", grad_accum=accum))
    work = workload(catalog.model(request.model).architecture, request)
    return step_time(work, CARD, 16, stage, False).comm_s


def test_fsdp_accumulating_under_no_sync_reduces_gradients_once_a_step(catalog) -> None:
    once, eight = _comm(catalog, Sharding.FSDP, 1), _comm(catalog, Sharding.FSDP, 8)
    assert eight < 8 * once * 0.8  # the gathers repeat, the reduce-scatter does not


def test_deepspeed_zero3_reduces_gradients_every_micro_batch(catalog) -> None:
    once, eight = _comm(catalog, Sharding.ZERO3, 1), _comm(catalog, Sharding.ZERO3, 8)
    assert eight == pytest.approx(8 * once)


def _work(catalog: Catalog, **fields):
    request = resolve(Request(**{"model": "llama-3.1-8b", **fields}))
    return workload(catalog.model(request.model).architecture, request)


def test_checkpointing_recomputes_the_decoder_layers_but_not_the_lm_head(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    shape = {"method": "full", "seq_len": 2048, "micro_batch": 2}
    on = _work(catalog, grad_checkpointing=True, **shape)
    off = _work(catalog, grad_checkpointing=False, **shape)
    second_forward = 2.0 * arch.active_linear_params * 2048 * 2
    assert on.matmul_flops - off.matmul_flops == pytest.approx(second_forward)


def test_zero2_reduces_gradients_every_micro_batch_where_zero1_waits_for_the_step(
    catalog: Catalog,
) -> None:
    slow = CARD.model_copy(update={"link_gbps": 10.0, "fabric": "pcie"})

    def comm(stage: Sharding, accum: int) -> float:
        request = resolve(Request(model="llama-3.1-8b", method="full", grad_accum=accum))
        work = workload(catalog.model(request.model).architecture, request)
        return step_time(work, slow, 8, stage, False).comm_s

    assert comm(Sharding.ZERO1, 8) == pytest.approx(comm(Sharding.ZERO1, 1))
    # One reduce per micro-batch plus one gather of the updated weights per step.
    assert comm(Sharding.ZERO2, 8) == pytest.approx(comm(Sharding.ZERO2, 1) * 9 / 2)


def test_hsdp_accumulating_reduces_its_gradients_once_per_step(catalog: Catalog) -> None:
    one = _step(catalog, count=16, stage=Sharding.HSDP, method="full", grad_accum=1)
    eight = _step(catalog, count=16, stage=Sharding.HSDP, method="full", grad_accum=8)
    work = _work(catalog, method="full")
    gather = 2 * work.stored_weight_bytes * 7 / 8 / link_bytes_per_s(CARD, 8, 1)
    # Eight gathers per micro-batch pair, the local reduce-scatter once, not eight times.
    assert eight.comm_s == pytest.approx(one.comm_s + 7 * gather)


def test_tensor_parallel_traffic_follows_the_tokens_each_ring_rank_holds(
    catalog: Catalog,
) -> None:
    shape = {"method": "full", "seq_len": 32768, "tensor_parallel": 2}
    one_rank = _work(catalog, context_parallel=1, **shape)
    ring_of_four = _work(catalog, context_parallel=4, **shape)
    assert ring_of_four.tp_comm_bytes == pytest.approx(one_rank.tp_comm_bytes / 4)


def test_an_fp32_full_fine_tune_communicates_four_byte_gradients(catalog: Catalog) -> None:
    fp32 = _work(catalog, method="full", precision="fp32")
    bf16 = _work(catalog, method="full", precision="bf16", state_precision="pure-bf16")
    assert fp32.grad_bytes == pytest.approx(2 * bf16.grad_bytes)


def _compute_line(card, **fields) -> str:
    request = Request(model="llama-3.1-8b", dataset_tokens=10**8, epochs=1, seq_len=2048,
                      micro_batch=2, grad_checkpointing=False, gpu=card.id, **fields)
    result = estimate(request, catalog_with(card))
    return next(a for a in result.assumptions if a.startswith("Compute:"))


def test_an_adapter_mfu_over_100_percent_says_it_is_counted_on_six_p() -> None:
    # A card whose achievable rate is twice its rated one: LoRA's 4·P of work per token
    # then reads well over 100% on the 6·P count a stated ``mfu`` uses.
    fast = gpu("g192", 192, bf16_tflops=500.0, matmul_tflops=1000.0, hbm_gbps=3000.0,
               link_gbps=450.0)
    line = _compute_line(fast, method="lora")
    assert "MFU on 6·P per token: over 100% because LoRA skips the frozen weights'" in line


def test_a_full_fine_tune_quotes_its_mfu_plainly() -> None:
    line = _compute_line(CARD, method="full", gpu_count=4, sharding="fsdp")
    assert "% MFU)" in line and "over 100%" not in line


def test_a_faster_card_is_not_slower_when_the_host_bounds_the_micro_batch() -> None:
    from adapters.parse import parse_query

    def rate(card: str) -> float:
        query = f"mistral-7b full seq 512 bs 1 16x {card} zero2 50M tokens"
        return estimate(parse_query(query)).options[0].timing.tokens_per_second or 0.0

    assert rate("b200") >= rate("h100-sxm")


def test_gb200s_within_one_nvl72_rack_stay_on_nvlink(catalog: Catalog) -> None:
    gb200 = catalog.gpus["gb200"]
    assert gb200.gpus_per_node == 72
    assert link_bytes_per_s(gb200, 16, nodes_for(16, None, gb200.gpus_per_node)) == (
        gb200.link_gbps * 1e9
    )
    walls = []
    for count in (8, 16):
        request = Request(model="qwen3-30b-a3b", method="full", sharding="zero3", seq_len=512,
                          dataset_tokens=10**9, gpu="gb200", gpu_count=count)
        wall = estimate(request, catalog).options[0].timing.wall_hours
        assert wall is not None
        walls.append(wall)
    assert walls[1] < 0.6 * walls[0]


def test_a_tensor_parallel_group_straddling_two_racks_is_timed_across_them(
    catalog: Catalog,
) -> None:
    """72-card GB200 racks hold 4.5 groups of 16: one group crosses the network, and every
    group waits for it; groups of 8 tile the racks and stay on NVLink."""
    def hours(tp: int) -> float:
        request = Request(model="llama-3.1-70b", method="full", tensor_parallel=tp,
                          dataset_tokens=10**9, gpu="gb200", gpu_count=144)
        timed = estimate(request, catalog).options[0].timing.gpu_hours
        assert timed is not None
        return timed

    from engine.collectives import group_nodes

    assert (group_nodes(16, 144, 72), group_nodes(8, 144, 72), group_nodes(16, 64, 72)) == (
        2, 1, 1)
    assert hours(16) > hours(8)


def _moe_kernels(catalog: Catalog, framework: str, **fields) -> float:
    fields = {"method": "lora", **fields}
    request = resolve(Request(model="qwen3-30b-a3b", framework=framework, **fields),
                      catalog.model("qwen3-30b-a3b").architecture)
    return workload(catalog.model("qwen3-30b-a3b").architecture, request).kernels


def test_experts_run_one_by_one_launch_kernels_for_every_expert_a_micro_batch_reaches(
    catalog: Catalog,
) -> None:
    """transformers loops over the experts hit: at 2,048 tokens all 128 of each layer run
    their own projections (and adapters), where a dense layer runs one MLP."""
    from engine.constants import KERNELS_PER_EXPERT

    moe = catalog.model("qwen3-30b-a3b").architecture.moe
    assert moe is not None
    layers = catalog.model("qwen3-30b-a3b").architecture.moe_layers
    assert _moe_kernels(catalog, "hf") > layers * moe.num_experts * KERNELS_PER_EXPERT


def test_grouped_matmul_frameworks_launch_no_kernels_per_expert(catalog: Catalog) -> None:
    assert _moe_kernels(catalog, "torchtitan") < _moe_kernels(catalog, "hf") / 5


def test_a_short_micro_batch_reaches_fewer_experts(catalog: Catalog) -> None:
    short = _moe_kernels(catalog, "hf", seq_len=16, packing=True)
    long = _moe_kernels(catalog, "hf", seq_len=2048, packing=True)
    assert short < long


def test_float8_casts_launch_once_per_grouped_expert_projection(catalog: Catalog) -> None:
    """torchtitan runs every expert's tokens through one grouped matmul a projection, so
    float8 adds a few casts a layer, not one per expert."""
    plain = _moe_kernels(catalog, "torchtitan", method="full")
    fp8 = _moe_kernels(catalog, "torchtitan", method="full", float8=True)
    layers = catalog.model("qwen3-30b-a3b").architecture.num_layers
    assert fp8 - plain < 100 * layers


def test_dora_norms_launch_for_every_expert_reached_where_experts_loop(
    catalog: Catalog,
) -> None:
    from engine.constants import DORA_KERNELS_PER_ADAPTER

    arch = catalog.model("qwen3-30b-a3b").architecture
    assert arch.moe is not None
    added = (_moe_kernels(catalog, "hf", dora=True, fp32_adapters=False)
             - _moe_kernels(catalog, "hf", fp32_adapters=False))
    assert added > DORA_KERNELS_PER_ADAPTER * arch.moe_layers * arch.moe.num_experts * 3


def _moe_warning(catalog: Catalog, framework: str, mode: str = "detailed") -> str:
    """The MoE line of a Qwen3-30B-A3B LoRA reply on an H100 under ``framework``."""
    est = estimate(Request(model="qwen3-30b-a3b", method="lora", framework=framework,
                           mode=mode, gpu="h100-sxm", dataset_tokens=10**7), catalog)
    return next(w for w in est.warnings if w.startswith("MoE model"))


@pytest.mark.parametrize(("framework", "says"), [("hf", True), ("torchtitan", False)])
def test_an_moe_reply_says_when_its_experts_run_one_after_another(
    catalog: Catalog, framework: str, says: bool
) -> None:
    assert ("runs the experts one after another" in _moe_warning(catalog, framework)) is says


def test_a_napkin_moe_reply_claims_no_kernel_launches(catalog: Catalog) -> None:
    assert "launches its own kernels" not in _moe_warning(catalog, "hf", mode="napkin")


@pytest.mark.parametrize(("framework", "says"), [("hf", True), ("unsloth", False)])
def test_an_hf_moe_reply_says_transformers_5_groups_its_experts(
    catalog: Catalog, framework: str, says: bool
) -> None:
    grouped = "transformers 5 with PyTorch 2.9+ runs them as grouped matmuls"
    assert (grouped in _moe_warning(catalog, framework)) is says
