"""Op-level selective activation checkpointing (torchtitan's default for Llama 3 8B):
what it keeps, what it reruns, and how it is asked for."""

from __future__ import annotations

import pytest

from adapters.parse import parse_query
from catalog.loader import default_catalog
from engine import Request, estimate
from engine.activations import activation_bytes
from engine.choices import Sharding
from engine.profiles import resolve
from engine.selective import recomputed_params, saved_bytes_per_token
from engine.throughput import step_time
from engine.workload import workload
from tests.helpers import gpu

CAT = default_catalog()
ARCH = CAT.model("llama-3.1-8b").architecture
CARD = gpu("g80", 80, bf16_tflops=1000.0, matmul_tflops=800.0, hbm_gbps=3000.0, link_gbps=450.0)


def full(**fields: object) -> Request:
    base: dict[str, object] = {"model": "llama-3.1-8b", "method": "full", "seq_len": 4096,
                               "framework": "torchtitan"}
    return resolve(Request(**{**base, **fields}))


def test_it_keeps_the_outputs_of_q_v_gate_and_down_and_attentions() -> None:
    h, q, kv, i = ARCH.hidden_size, ARCH.q_width, ARCH.kv_width, ARCH.intermediate_size
    # matmuls q, k, v, o, gate, up, down: the first, third, fifth and seventh are kept
    kept = 2 * (q + kv + i + h) + 2 * q + 4 * ARCH.num_heads
    assert saved_bytes_per_token(ARCH, full(selective_checkpointing=True)) == pytest.approx(
        kept * ARCH.num_layers)


def test_an_adapters_two_matmuls_shift_which_outputs_are_kept() -> None:
    lora = full(method="lora", lora_targets="qv", lora_rank=16, selective_checkpointing=True)
    h, q, kv, i = ARCH.hidden_size, ARCH.q_width, ARCH.kv_width, ARCH.intermediate_size
    # q, qA, qB, k, v, vA, vB, o, gate, up, down: kept q, qB, v, vB, gate, down
    kept = 2 * (q + q + kv + kv + i + h) + 2 * q + 4 * ARCH.num_heads
    assert saved_bytes_per_token(ARCH, lora) == pytest.approx(kept * ARCH.num_layers)


def test_its_memory_lies_between_full_checkpointing_and_none() -> None:
    on = activation_bytes(ARCH, full())
    sac = activation_bytes(ARCH, full(selective_checkpointing=True))
    off = activation_bytes(ARCH, full(grad_checkpointing=False))
    assert on < sac < off


def test_it_means_nothing_without_checkpointing() -> None:
    off = full(grad_checkpointing=False)
    both = full(grad_checkpointing=False, selective_checkpointing=True)
    assert activation_bytes(ARCH, both) == activation_bytes(ARCH, off)


def test_the_backward_reruns_only_k_o_and_up() -> None:
    h, q, kv, i = ARCH.hidden_size, ARCH.q_width, ARCH.kv_width, ARCH.intermediate_size
    rerun = (h * kv + q * h + h * i) * ARCH.num_layers
    assert recomputed_params(ARCH, full(selective_checkpointing=True)) == rerun


def test_it_is_faster_than_full_checkpointing_and_slower_than_none() -> None:
    def rate(request: Request) -> float:
        return step_time(workload(ARCH, request), CARD, 1, Sharding.NONE, False).tokens_per_second

    assert rate(full()) < rate(full(selective_checkpointing=True)) < rate(
        full(grad_checkpointing=False))


@pytest.mark.parametrize("word", ["selective-ckpt", "sac", "selective-ac", "selective"])
def test_the_query_words_turn_it_on(word: str) -> None:
    request = parse_query(f"8b full {word} 8x h100 torchtitan 50M tokens", CAT)
    assert request.selective_checkpointing is True


def test_the_reply_says_selective_checkpointing_in_its_assumptions() -> None:
    request = parse_query("8b full selective-ckpt 8x h100 torchtitan 50M tokens", CAT)
    lines = estimate(request, CAT).assumptions
    assert any("selective checkpointing" in line for line in lines)
