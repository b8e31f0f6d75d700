"""Attention's FLOP rate: FlashAttention-2 below cuBLAS, and further below it on Hopper
and Blackwell; the card's native kernels (FlashAttention-3, cuDNN) when the user says
``fa3`` or the framework picks them; and how queries and configs say so."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.parse import QueryError, apply_followup, parse_query
from adapters.trainconfig import read_config
from catalog.loader import default_catalog
from engine import Request, estimate
from engine.choices import Sharding
from engine.constants import FA_EFFICIENCY
from engine.profiles import resolve
from engine.rates import attention_rate, matmul_rate
from engine.specs import Catalog, GpuSpec
from engine.throughput import step_time
from engine.workload import workload
from tests.helpers import H100_LIKE, catalog_with, gpu

# The same card with the FlashAttention-2 rate the catalog gives Hopper cards (0.35 of
# its 1,000 TF peak), and one without the column.
HOPPER_LIKE = H100_LIKE.model_copy(
    update={"flash_attention_tflops": 350.0, "compute_capability": 9.0}
)
BLACKWELL_LIKE = H100_LIKE.model_copy(
    update={"id": "g180", "flash_attention_tflops": 350.0, "compute_capability": 10.0}
)
AMPERE_LIKE = gpu("a80", 80, bf16_tflops=312.0, matmul_tflops=270.0, hbm_gbps=2000.0,
                  link_gbps=300.0)


def tokens_per_s(catalog: Catalog, card: GpuSpec, **fields: Any) -> float:
    request = resolve(Request(**{"model": "llama-3.1-8b", "method": "full", **fields}))
    work = workload(catalog.model(request.model).architecture, request)
    return step_time(work, card, 1, Sharding.NONE, False).tokens_per_second


def test_flash_attention_runs_at_the_cards_own_rate_where_the_catalog_has_one() -> None:
    assert attention_rate(HOPPER_LIKE, flash=True) == pytest.approx(350e12)


def test_flash_attention_elsewhere_runs_at_fa_efficiency_of_the_matmul_rate() -> None:
    assert attention_rate(AMPERE_LIKE, flash=True) == pytest.approx(
        FA_EFFICIENCY * matmul_rate(AMPERE_LIKE)
    )


def test_eager_attention_runs_at_the_matmul_rate_on_every_card() -> None:
    for card in (HOPPER_LIKE, AMPERE_LIKE):
        assert attention_rate(card, flash=False) == matmul_rate(card)


def test_a_hopper_card_gains_less_over_ampere_as_the_sequence_grows(catalog: Catalog) -> None:
    def speedup(seq: int, batch: int) -> float:
        fast = tokens_per_s(catalog, HOPPER_LIKE, seq_len=seq, micro_batch=batch)
        return fast / tokens_per_s(catalog, AMPERE_LIKE, seq_len=seq, micro_batch=batch)

    assert speedup(32768, 1) < speedup(2048, 16)


def test_the_hopper_rate_slows_long_sequences_against_the_same_card_without_it(
    catalog: Catalog,
) -> None:
    with_rate = tokens_per_s(catalog, HOPPER_LIKE, seq_len=16384, micro_batch=1)
    without = tokens_per_s(catalog, H100_LIKE, seq_len=16384, micro_batch=1)
    assert with_rate < 0.95 * without


def test_the_shipped_h100_runs_flash_attention_at_about_35_percent_of_its_peak(
    catalog: Catalog,
) -> None:
    h100 = catalog.gpu("h100-sxm")
    assert h100.flash_attention_tflops == pytest.approx(0.35 * h100.bf16_tflops, rel=0.01)


def test_native_kernels_reach_fa_efficiency_of_the_matmul_rate_on_hopper_too() -> None:
    assert attention_rate(HOPPER_LIKE, flash=True, native=True) == pytest.approx(
        FA_EFFICIENCY * matmul_rate(HOPPER_LIKE)
    )


def test_fa3_shortens_a_long_sequence_step_on_hopper(catalog: Catalog) -> None:
    fa2 = tokens_per_s(catalog, HOPPER_LIKE, seq_len=16384, micro_batch=1)
    fa3 = tokens_per_s(catalog, HOPPER_LIKE, seq_len=16384, micro_batch=1, native_attention=True)
    assert fa3 > 1.05 * fa2


def test_fa3_changes_nothing_where_flash_attention_2_already_reaches_its_share(
    catalog: Catalog,
) -> None:
    fa2 = tokens_per_s(catalog, AMPERE_LIKE, seq_len=16384, micro_batch=1)
    fa3 = tokens_per_s(catalog, AMPERE_LIKE, seq_len=16384, micro_batch=1, native_attention=True)
    assert fa3 == pytest.approx(fa2)


@pytest.mark.parametrize(
    ("framework", "card"),
    [("torchtitan", BLACKWELL_LIKE), ("hf", HOPPER_LIKE), ("hf", BLACKWELL_LIKE)],
    ids=["torchtitan-on-blackwell", "hf-on-hopper", "hf-on-blackwell"],
)
def test_a_framework_runs_cudnn_attention_where_its_attention_puts_it_first(
    catalog: Catalog, framework: str, card: GpuSpec
) -> None:
    unsaid = tokens_per_s(catalog, card, seq_len=16384, framework=framework)
    told = tokens_per_s(catalog, card, seq_len=16384, framework=framework,
                        native_attention=True)
    assert unsaid == pytest.approx(told)


def test_torchtitan_runs_flash_attention_2_on_hopper(catalog: Catalog) -> None:
    titan = tokens_per_s(catalog, HOPPER_LIKE, seq_len=16384, framework="torchtitan")
    told = tokens_per_s(catalog, HOPPER_LIKE, seq_len=16384, framework="torchtitan",
                        native_attention=True)
    assert titan < 0.95 * told


def test_the_shipped_b200_runs_flash_attention_2_at_its_measured_rate(
    catalog: Catalog,
) -> None:
    b200 = catalog.gpu("b200")
    assert b200.compute_capability == 10.0
    assert attention_rate(b200, flash=True) == pytest.approx(333e12)


@pytest.mark.parametrize(
    "words", ["fa3", "fa4", "flash attention 3", "flash_attention_3", "cudnn attention"]
)
def test_fa3_words_ask_for_the_native_kernels(words: str) -> None:
    assert parse_query(f"8b lora {words} h100", default_catalog()).native_attention


@pytest.mark.parametrize(
    "words", ["fa2", "flash-attn-2", "flash attention 2", "attn_implementation=flash_attention_2"]
)
def test_fa2_words_say_flash_attention_2_itself(words: str) -> None:
    request = parse_query(f"8b lora {words} h100", default_catalog())
    assert request.native_attention is False
    assert "native_attention" in request.model_fields_set


def test_plain_flash_attention_words_leave_the_kernels_to_the_framework() -> None:
    request = parse_query("8b lora sdpa h100", default_catalog())
    assert "native_attention" not in request.model_fields_set


def test_hf_runs_flash_attention_2_on_ampere(catalog: Catalog) -> None:
    hf = tokens_per_s(catalog, AMPERE_LIKE, seq_len=16384, framework="hf")
    told = tokens_per_s(catalog, AMPERE_LIKE, seq_len=16384, framework="hf",
                        native_attention=False)
    assert hf == pytest.approx(told)


def test_fa2_said_on_hf_keeps_flash_attention_2_on_hopper(catalog: Catalog) -> None:
    fa2 = tokens_per_s(catalog, HOPPER_LIKE, seq_len=16384, framework="hf",
                       native_attention=False)
    cudnn = tokens_per_s(catalog, HOPPER_LIKE, seq_len=16384, framework="hf")
    assert fa2 < 0.95 * cudnn


def test_fa3_beside_no_flash_is_refused_naming_both() -> None:
    with pytest.raises(QueryError, match='"fa3" is a FlashAttention kernel, but "no-flash"'):
        parse_query("8b lora fa3 no-flash h100", default_catalog())


@pytest.mark.parametrize(
    ("value", "native"),
    [("flash_attention_3", True), ("kernels-community/flash-attn3", True),
     ("flash_attention_2", False), ("sdpa", None)],
)
def test_a_configs_attn_implementation_says_which_kernels(
    value: str, native: bool | None
) -> None:
    read = read_config(
        "model_name_or_path: meta-llama/Llama-3.1-8B\nuse_peft: true\n"
        f"attn_implementation: {value}\n"
    )
    assert read.fields.get("native_attention") is native
    assert read.fields["flash_attention"] is True


def test_the_compute_line_names_flash_attention_2_on_a_hopper_card(catalog: Catalog) -> None:
    cards = catalog_with(HOPPER_LIKE)
    request = Request(model="llama-3.1-8b", method="lora", gpu="g80", dataset_tokens=10**7)
    line = next(a for a in estimate(request, cards).assumptions if a.startswith("Compute"))
    assert "on FlashAttention-2 (350 TFLOPs on this card)" in line


def test_the_compute_line_says_nothing_of_kernels_where_the_card_has_no_fa2_rate(
    catalog: Catalog,
) -> None:
    cards = catalog_with(AMPERE_LIKE)
    request = Request(model="llama-3.1-8b", method="lora", gpu="a80", dataset_tokens=10**7)
    line = next(a for a in estimate(request, cards).assumptions if a.startswith("Compute"))
    assert "FlashAttention-2" not in line


def _warnings(card: GpuSpec, **fields: Any) -> list[str]:
    request = Request(**{"model": "llama-3.1-8b", "method": "lora", "gpu": card.id,
                         "dataset_tokens": 10**7, **fields})
    return estimate(request, catalog_with(card)).warnings


def test_a_long_sequence_on_hopper_is_told_what_fa3_would_save() -> None:
    (tip,) = [w for w in _warnings(HOPPER_LIKE, seq_len=16384) if "`fa3`" in w]
    assert "FlashAttention-3 or cuDNN attention (`fa3`) would cut the time by about" in tip


def test_blackwell_is_told_to_ask_for_cudnn_attention() -> None:
    tips = [w for w in _warnings(BLACKWELL_LIKE, seq_len=16384) if "would cut the time" in w]
    assert tips and "(`cudnn attention`)" in tips[0]


def test_no_fa3_tip_once_fa3_is_said_or_the_sequence_is_short() -> None:
    said = _warnings(HOPPER_LIKE, seq_len=16384, native_attention=True)
    short = _warnings(HOPPER_LIKE, seq_len=512, micro_batch=1)
    assert not [w for w in said + short if "would cut the time" in w]


def test_no_fa3_tip_where_the_framework_already_runs_cudnn() -> None:
    titan = _warnings(BLACKWELL_LIKE, seq_len=16384, framework="torchtitan")
    assert not [w for w in titan if "would cut the time" in w]


def test_cudnn_attention_as_a_followup_asks_for_the_native_kernels() -> None:
    cat = default_catalog()
    before = parse_query("8b lora seq 8k b200", cat)
    assert apply_followup(before, "what if cudnn attention", cat).native_attention
