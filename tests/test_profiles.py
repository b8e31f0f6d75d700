"""Framework profiles: what a framework does that its users do not say."""

from __future__ import annotations

import pytest

from engine import Request, estimate
from engine.activations import (
    ALL_SAVED,
    SavedInputs,
    activation_bytes,
    autocast_copy_bytes,
    dequant_workspace_bytes,
    layer_activation_bytes,
    logits_bytes_per_token,
    saved_inputs,
)
from engine.choices import Framework, Method, Precision, Sharding, StatePrecision
from engine.constants import LOGITS_BYTES, LOGITS_BYTES_HF
from engine.memory import footprint
from engine.profiles import PROFILES, changes_for, resolve, trained_architecture
from engine.specs import Catalog


def test_generic_is_the_default_and_changes_nothing() -> None:
    request = Request(model="llama-3.1-8b", method="lora")
    assert request.framework is Framework.GENERIC
    assert resolve(request) is request
    assert PROFILES[Framework.GENERIC].changes == ()


def test_every_framework_has_a_profile() -> None:
    assert set(PROFILES) == set(Framework)


def test_hf_keeps_three_fp32_sized_copies_of_the_logits(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    generic = Request(model="llama-3.1-8b", method="lora", micro_batch=8)
    hf = resolve(generic.model_copy(update={"framework": Framework.HF}))
    extra = logits_bytes_per_token(arch, hf) - logits_bytes_per_token(arch, generic)
    assert extra == pytest.approx((LOGITS_BYTES_HF - LOGITS_BYTES) * arch.vocab_size)


def test_a_frozen_linear_keeps_no_input_unless_its_adapter_does() -> None:
    lora = Request(model="x", method="lora", framework="torchtune", lora_targets="qv",
                   lora_dropout=0.05)
    assert saved_inputs(resolve(lora)) == SavedInputs(False, False, False, False)
    no_dropout = lora.model_copy(update={"lora_dropout": 0.0})
    assert saved_inputs(resolve(no_dropout)) == SavedInputs(True, False, False, False)
    every = no_dropout.model_copy(update={"lora_targets": "all-linear"})
    assert saved_inputs(resolve(every)) == ALL_SAVED


def test_mlp_adapters_without_dropout_keep_only_the_mlp_inputs() -> None:
    mlp = Request(model="x", method="lora", framework="torchtune", lora_targets="mlp")
    assert saved_inputs(resolve(mlp)) == SavedInputs(False, True, True, False)


def test_each_peft_adapter_keeps_its_own_16_bit_copy_of_its_input_under_autocast() -> None:
    qv = Request(model="x", method="lora", framework="hf", lora_targets="qv", lora_dropout=0.0)
    keep = saved_inputs(resolve(qv))
    assert (keep.attention, keep.attention_copies, keep.copy_bytes) == (True, 2, 2.0)
    every = qv.model_copy(update={"lora_targets": "all-linear"})
    assert saved_inputs(resolve(every)).attention_copies == 3


def test_peft_adapters_trained_plainly_in_bf16_keep_their_fp32_casts() -> None:
    plain = Request(model="x", method="lora", framework="hf", lora_dropout=0.0,
                    state_precision="pure-bf16")
    assert saved_inputs(resolve(plain)).copy_bytes == 4.0


def test_peft_adapter_copies_add_activation_memory_without_checkpointing(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture

    def layers(framework: str, **settings: object) -> float:
        run = Request(model="llama-3.1-8b", method="lora", framework=framework,
                      lora_dropout=0.0, grad_checkpointing=False, **settings)
        return layer_activation_bytes(arch, resolve(run))

    shared, autocast = layers("torchtune"), layers("hf")
    plain = layers("hf", state_precision="pure-bf16")
    # q, k, v and gate, up each keep a copy (+3h 16-bit), plainly FP32 everywhere.
    assert autocast - shared == 2 * 3 * arch.hidden_size * arch.num_layers
    assert shared < autocast < plain


def test_generic_counts_every_linear_input_as_the_specification_does() -> None:
    assert saved_inputs(Request(model="x", method="lora", lora_targets="qv")) == ALL_SAVED


def test_bitsandbytes_qlora_keeps_every_quantized_linears_input_and_torchao_does_not() -> None:
    hf = Request(model="x", method="qlora", framework="hf", lora_targets="qv")
    assert saved_inputs(resolve(hf)) == ALL_SAVED
    torchtune = hf.model_copy(update={"framework": Framework.TORCHTUNE})
    assert saved_inputs(resolve(torchtune)) == SavedInputs(True, False, False, False)


def test_under_checkpointing_the_logits_and_the_recomputed_layer_peak_apart(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    hf = resolve(Request(model="llama-3.1-8b", method="lora", framework="hf", micro_batch=4))
    logits = 4 * 2048 * logits_bytes_per_token(arch, hf)
    without_logits = activation_bytes(arch, hf.model_copy(update={"fused_ce": True}))
    assert activation_bytes(arch, hf) < without_logits + logits
    assert activation_bytes(arch, hf) >= logits


def test_hf_sets_lora_dropout_unless_the_user_says_otherwise() -> None:
    assert resolve(Request(model="x", framework="hf")).lora_dropout == 0.05
    assert resolve(Request(model="x", framework="hf", lora_dropout=0.0)).lora_dropout == 0.0


def test_torchtune_and_litgpt_train_in_pure_bf16_unless_told() -> None:
    for name in ("torchtune", "litgpt"):
        assert resolve(Request(model="x", framework=name)).state_precision is (
            StatePrecision.PURE_BF16
        )
    told = Request(model="x", framework="torchtune", state_precision="fp32")
    assert resolve(told).state_precision is StatePrecision.FP32


def test_a_fused_loss_the_user_names_wins_over_the_profile(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    fused = Request(model="llama-3.1-8b", method="lora", framework="hf", fused_ce=True)
    assert logits_bytes_per_token(arch, resolve(fused)) == 0.0


def test_torchtunes_chunked_loss_keeps_fp32_log_softmax_unless_compiled(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    eager = resolve(Request(model="llama-3.1-8b", method="lora", framework="torchtune"))
    compiled = resolve(eager.model_copy(update={"compile": True}))

    assert logits_bytes_per_token(arch, eager) == 4.0 * arch.vocab_size
    assert logits_bytes_per_token(arch, compiled) == 2.0 * arch.vocab_size
    assert any("2 B per logit under torch.compile" in c for c in changes_for(compiled))
    assert not any("per logit" in c for c in changes_for(eager))


def test_hf_keeps_a_soft_capped_models_tanh_output_beside_its_loss_path(
    catalog: Catalog,
) -> None:
    gemma2 = catalog.model("gemma-2-9b").architecture
    hf = resolve(Request(model="gemma-2-9b", method="lora", framework="hf"))
    fused = resolve(hf.model_copy(update={"fused_ce": True}))
    generic = resolve(Request(model="gemma-2-9b", method="lora"))

    assert gemma2.logit_softcap
    assert logits_bytes_per_token(gemma2, hf) == (LOGITS_BYTES_HF + 2.0) * gemma2.vocab_size
    assert logits_bytes_per_token(gemma2, fused) == 0.0
    assert logits_bytes_per_token(gemma2, generic) == LOGITS_BYTES * gemma2.vocab_size


def test_the_root_unit_fact_is_said_only_where_fsdp1_gathers(catalog: Catalog) -> None:
    def facts(query: dict[str, object]) -> list[str]:
        request = Request(model="llama-3.1-8b", framework="hf", sharding="fsdp", gpu="h100-sxm",
                          **query)
        return estimate(request, catalog).framework_changes

    assert any("root unit" in f for f in facts({"method": "lora", "gpu_count": 4}))
    assert not any("root unit" in f for f in facts({"method": "lora", "gpu_count": 1}))
    assert not any("gradient" in f for f in facts({"method": "lora", "gpu_count": 4}))
    assert any("whole gradient" in f for f in facts({"method": "full", "gpu_count": 4}))


def test_a_soft_capped_models_memory_line_counts_its_tanh_output(catalog: Catalog) -> None:
    est = estimate(Request(model="gemma-2-9b", method="lora", framework="hf", seq_len=8192,
                           gpu="h100-sxm"), catalog)

    assert any("loss keeps 14 B per logit (the soft-cap" in a for a in est.assumptions)


def test_unsloth_keeps_no_logits_and_offloads_checkpointed_activations(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    unsloth = resolve(Request(model="llama-3.1-8b", method="qlora", framework="unsloth",
                              seq_len=16384))
    generic = Request(model="llama-3.1-8b", method="qlora", seq_len=16384)
    assert unsloth.activation_offload
    assert activation_bytes(arch, unsloth) < 0.3 * activation_bytes(arch, generic)


def test_only_litgpt_gives_frozen_weights_fsdp_gradients(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    for framework in Framework:
        fp = footprint(arch, resolve(Request(model="llama-3.1-8b", method="lora",
                                             framework=framework)))
        assert (fp.frozen_grad > 0) is (framework is Framework.LITGPT), framework


def test_every_reply_states_the_framework_and_what_it_changed(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", framework="hf"), catalog)
    [line] = [a for a in est.assumptions if a.startswith("Framework:")]
    assert "12 B per logit" in line and "dropout 0.05" in line
    doc = est.to_json()["framework"]
    assert doc["name"] == "hf" and doc["lora_dropout"] == 0.05


def test_a_full_fine_tunes_json_has_no_lora_dropout(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", framework="hf"), catalog)
    assert est.to_json()["framework"]["lora_dropout"] is None


def test_generic_says_what_hf_would_add_when_the_logits_are_large(catalog: Catalog) -> None:
    est = estimate(Request(model="qwen2.5-7b", method="lora", seq_len=8192, micro_batch=2),
                   catalog)
    assert any("`hf`" in w and "more" in w for w in est.warnings)


def test_an_hf_run_at_batch_8_needs_more_than_generic(catalog: Catalog) -> None:
    on_one = {"gpu": "a100-80gb-sxm", "gpu_count": 1}
    generic = estimate(Request(model="llama-3.1-8b", method="lora", micro_batch=8, **on_one),
                       catalog)
    hf = estimate(Request(model="llama-3.1-8b", method="lora", micro_batch=8, framework="hf",
                          **on_one), catalog)
    assert hf.memory.total > generic.memory.total + 10


def test_the_request_keeps_what_the_user_said_and_the_estimate_what_it_computed(
    catalog: Catalog,
) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", framework="litgpt",
                           sharding=Sharding.FSDP, gpu="a100-40gb-sxm", gpu_count=2), catalog)
    assert est.request.state_precision is StatePrecision.FP32
    assert est.effective.state_precision is StatePrecision.PURE_BF16


def test_a_follow_up_keeps_the_framework_defaults_for_what_was_never_said() -> None:
    from adapters.parse import apply_followup, parse_query

    first = parse_query("8b lora trl 50M tokens")
    changed = apply_followup(first, "what if 8k seq")
    assert "lora_dropout" not in changed.model_fields_set
    assert resolve(changed).lora_dropout == 0.05


def test_a_said_default_survives_a_button_round_trip() -> None:
    from adapters.discord.ids import decode_request, encode_request
    from bot.replies import request_from_json, request_to_compact_json

    said = Request(model="llama-3.1-8b", framework="hf", lora_dropout=0.0)
    code = encode_request(said)
    assert code is not None
    for back in (decode_request(code), request_from_json(request_to_compact_json(said))):
        assert back is not None and resolve(back).lora_dropout == 0.0


def test_deepspeed_zero_keeps_fp32_gradients_shown_as_gradients_under_hf(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    hf = resolve(Request(model="llama-3.1-8b", method="full", framework="hf", sharding="zero3"))
    generic = Request(model="llama-3.1-8b", method="full", sharding="zero3")
    with_partition = footprint(arch, hf).per_gpu(Sharding.ZERO3, 8)
    without = footprint(arch, generic).per_gpu(Sharding.ZERO3, 8)
    assert with_partition.gradients - without.gradients == pytest.approx(
        4 * arch.total_params / 8 / 1e9)
    assert with_partition.optimizer == pytest.approx(without.optimizer)


def test_fsdp_and_pure_bf16_keep_no_fp32_gradient_partition(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    hf = resolve(Request(model="llama-3.1-8b", method="full", framework="hf"))
    generic = Request(model="llama-3.1-8b", method="full")
    for stage in (Sharding.FSDP, Sharding.NONE):
        # During backward: hf's unfused AdamW step is a later peak of its own.
        assert footprint(arch, hf).during_backward(stage, 8).optimizer == pytest.approx(
            footprint(arch, generic).during_backward(stage, 8).optimizer
        )
    pure = hf.model_copy(update={"state_precision": StatePrecision.PURE_BF16})
    assert footprint(arch, pure).zero_fp32_grads == 0.0


def test_fp32_weights_under_autocast_keep_a_bf16_copy_for_backward(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    bf16 = resolve(Request(model="llama-3.1-8b", method="lora", framework="hf",
                           grad_checkpointing=False))
    fp32 = bf16.model_copy(update={"precision": Precision.FP32})
    extra = footprint(arch, fp32).activations - footprint(arch, bf16).activations
    assert extra == pytest.approx(
        2 * (arch.linear_params + arch.vocab_size * arch.hidden_size) / 1e9
    )
    generic = Request(model="llama-3.1-8b", method="lora", precision="fp32",
                      grad_checkpointing=False)
    assert autocast_copy_bytes(arch, generic) == 0.0


def test_qlora_holds_a_16_bit_copy_of_its_largest_4_bit_matrix(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    hf = resolve(Request(model="llama-3.1-8b", method="qlora", framework="hf"))
    assert dequant_workspace_bytes(arch, hf) == 2 * arch.largest_linear_params
    assert dequant_workspace_bytes(arch, Request(model="llama-3.1-8b", method="qlora")) == 0.0
    lora = hf.model_copy(update={"method": "lora"})
    assert dequant_workspace_bytes(arch, lora) == 0.0


def test_torchtune_qlora_without_compile_holds_torchaos_eager_dequantization_chain(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    eager = resolve(Request(model="llama-3.1-8b", method="qlora", framework="torchtune"))
    # int64 codes (8 B), their look-ups and scaled halves (4 B) and the BF16 result (2 B)
    assert dequant_workspace_bytes(arch, eager) == 14 * arch.largest_linear_params


def test_torch_compile_fuses_torchaos_dequantization_into_one_bf16_copy(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    compiled = resolve(Request(model="llama-3.1-8b", method="qlora", framework="torchtune",
                               compile=True))
    assert dequant_workspace_bytes(arch, compiled) == 2 * arch.largest_linear_params


def test_the_reply_names_torchaos_eager_dequantization_only_for_uncompiled_qlora() -> None:
    qlora = Request(model="llama-3.1-8b", method="qlora", framework="torchtune")
    assert any("torchao" in c for c in changes_for(qlora))
    assert not any("torchao" in c for c in changes_for(qlora.model_copy(update={"compile": True})))
    assert not any("torchao" in c for c in changes_for(qlora.model_copy(update={"method": "lora"})))
    hf = Request(model="llama-3.1-8b", method="qlora", framework="hf")
    assert not any("torchao" in c for c in changes_for(hf))


def test_litgpt_quantizes_the_lm_head_from_fp16_so_its_copy_is_the_workspace(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    litgpt = resolve(Request(model="llama-3.1-8b", method="qlora", framework="litgpt"))
    assert dequant_workspace_bytes(arch, litgpt) == 4 * arch.vocab_size * arch.hidden_size


def test_eager_rmsnorm_keeps_its_fp32_upcast_and_compile_does_not(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    hf = resolve(Request(model="llama-3.1-8b", method="full", framework="hf",
                         grad_checkpointing=False, fused_ce=True))
    compiled = hf.model_copy(update={"compile": True})
    generic = Request(model="llama-3.1-8b", method="full", grad_checkpointing=False,
                      fused_ce=True)
    per_token = activation_bytes(arch, hf) - activation_bytes(arch, generic)
    tokens = 2048
    # Two norms a layer keep 4 B an element where 2 are counted, and the output
    # projection's input is a copy apart from FlashAttention's output.
    expected = arch.num_layers * (2 * 2 * arch.hidden_size + 2 * arch.q_width) * tokens
    assert per_token == pytest.approx(expected)
    assert activation_bytes(arch, compiled) < activation_bytes(arch, generic)


def test_the_reply_names_lora_dropout_only_for_adapter_runs() -> None:
    full = Request(model="llama-3.1-8b", method="full", framework="hf")
    lora = Request(model="llama-3.1-8b", method="lora", framework="hf")
    assert not any("dropout" in c for c in changes_for(full))
    assert any("dropout" in c for c in changes_for(lora))


def test_the_reply_names_the_unfused_optimizer_only_for_full_fine_tunes() -> None:
    full = Request(model="llama-3.1-8b", method="full", framework="hf", sharding="none")
    lora = Request(model="llama-3.1-8b", method="lora", framework="hf", sharding="none")
    assert any("AdamW" in c for c in changes_for(full))
    assert not any("AdamW" in c for c in changes_for(lora))


def test_the_reply_names_the_unfused_optimizer_only_outside_deepspeed() -> None:
    full = Request(model="llama-3.1-8b", method="full", framework="hf")
    assert any("AdamW" in c for c in changes_for(full, Sharding.NONE))
    assert not any("AdamW" in c for c in changes_for(full, Sharding.ZERO3))


def test_the_reply_names_deepspeed_only_where_the_card_choice_runs_zero() -> None:
    full = Request(model="llama-3.1-8b", method="full", framework="hf")
    assert not any("DeepSpeed ZeRO" in c for c in changes_for(full, Sharding.NONE))
    assert any("DeepSpeed ZeRO" in c for c in changes_for(full, Sharding.ZERO3))


def test_the_reply_names_deepspeed_only_where_zero_may_run() -> None:
    single = Request(model="llama-3.1-8b", method="full", framework="hf", sharding="none")
    zero = Request(model="llama-3.1-8b", method="full", framework="hf", sharding="zero3")
    assert not any("DeepSpeed ZeRO" in c for c in changes_for(single))
    assert any("DeepSpeed ZeRO" in c for c in changes_for(zero))


def _hf_qlora(**fields: object) -> Request:
    base = {"model": "llama-3.1-8b", "method": "qlora", "framework": "hf", "seq_len": 1024,
            "micro_batch": 4}
    return resolve(Request(**{**base, **fields}))


def test_hf_qlora_keeps_its_checkpointed_layer_inputs_in_fp32(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    hf = _hf_qlora()
    sharded = _hf_qlora(sharding="fsdp")  # TRL skips the k-bit preparation here
    extra = activation_bytes(arch, hf) - activation_bytes(arch, sharded)
    tokens = hf.seq_len * hf.micro_batch
    assert extra == pytest.approx(tokens * arch.num_layers * arch.hidden_size * (4 - 2))


def test_hf_qlora_mlp_activation_tensors_are_fp32_without_checkpointing(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    hf = _hf_qlora(grad_checkpointing=False)
    gptq = _hf_qlora(grad_checkpointing=False, gptq=True)
    extra = activation_bytes(arch, hf) - activation_bytes(arch, gptq)
    tokens = hf.seq_len * hf.micro_batch
    gate_activation_up = 3 * arch.intermediate_size * (4 - 2)
    assert extra == pytest.approx(tokens * arch.num_layers * gate_activation_up)


def test_only_hf_qlora_on_a_bitsandbytes_base_runs_an_fp32_stream() -> None:
    line = "QLoRA norms in FP32"
    assert any(line in c for c in changes_for(_hf_qlora()))
    assert not any(line in c for c in changes_for(_hf_qlora(method="lora")))
    assert not any(line in c for c in changes_for(_hf_qlora(gptq=True)))
    assert not any(line in c for c in changes_for(_hf_qlora(sharding="zero3")))
    torchtune = _hf_qlora(framework="torchtune")
    assert not any(line in c for c in changes_for(torchtune))


def test_generic_qlora_keeps_a_16_bit_stream(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    generic = Request(model="llama-3.1-8b", method="qlora", seq_len=1024, micro_batch=4)
    gptq = generic.model_copy(update={"gptq": True})
    assert activation_bytes(arch, generic) == activation_bytes(arch, gptq)


def test_litgpt_trains_a_separate_copy_of_a_tied_lm_head(catalog: Catalog) -> None:
    arch = catalog.model("gemma-2b").architecture
    assert arch.tie_embeddings
    full = Request(model="gemma-2b", method="full", framework="litgpt")
    hf = full.model_copy(update={"framework": Framework.HF})
    head = arch.vocab_size * arch.hidden_size
    extra = footprint(arch, resolve(full)).base_weights - footprint(
        arch, resolve(hf).model_copy(update={"state_precision": StatePrecision.PURE_BF16})
    ).base_weights
    assert extra == pytest.approx(2 * head / 1e9)


def test_an_untied_model_gains_no_head_under_litgpt(catalog: Catalog) -> None:
    arch = catalog.model("llama-2-7b").architecture
    lit = resolve(Request(model="llama-2-7b", method="lora", framework="litgpt"))
    assert not arch.tie_embeddings and trained_architecture(arch, lit) is arch
    generic = Request(model="llama-2-7b", method="lora")
    assert footprint(arch, lit).base_weights == footprint(arch, generic).base_weights


def test_the_reply_names_the_separate_head_only_for_tied_models(catalog: Catalog) -> None:
    lit = Request(model="gemma-2b", method="lora", framework="litgpt")
    line = "separate LM head"
    tied = catalog.model("gemma-2b").architecture
    untied = catalog.model("llama-2-7b").architecture
    assert any(line in c for c in changes_for(lit, None, tied))
    assert not any(line in c for c in changes_for(lit, None, untied))
    assert not any(line in c for c in changes_for(lit))


def test_auto_sharding_counts_the_fp32_stream_only_on_one_card(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    auto = footprint(arch, _hf_qlora(sharding="auto"))
    zero3 = footprint(arch, _hf_qlora(sharding="zero3"))
    one_card = footprint(arch, _hf_qlora(sharding="none"))
    assert auto.per_gpu(Sharding.NONE, 1).activations == one_card.activations
    assert auto.per_gpu(Sharding.ZERO3, 4).activations == zero3.activations
    assert zero3.activations < one_card.activations


def test_the_fp32_stream_line_follows_the_shown_cards_sharding() -> None:
    line = "QLoRA norms in FP32"
    auto = _hf_qlora(sharding="auto")
    assert any(line in c for c in changes_for(auto, Sharding.NONE))
    assert not any(line in c for c in changes_for(auto, Sharding.ZERO3))


def test_hf_qlora_on_several_cards_under_auto_is_sized_as_zero3(catalog: Catalog) -> None:
    fields = {"model": "llama-3.1-70b", "method": "qlora", "framework": "hf",
              "gpu": "a100-40gb-sxm", "gpu_count": 2, "micro_batch": 2}
    auto = estimate(Request(**fields), catalog).options[0]
    zero3 = estimate(Request(sharding="zero3", **fields), catalog).options[0]
    assert auto.per_gpu_gb == pytest.approx(zero3.per_gpu_gb)


def test_equal_architectures_of_two_models_both_estimate_under_litgpt(catalog: Catalog) -> None:
    """Llama 3.1 70B and 3.3 70B share one architecture (equal, not the same object): the
    engine's per-architecture caches compare them, which must not recurse."""
    first = catalog.model("llama-3.1-70b").architecture
    second = catalog.model("llama-3.3-70b").architecture
    assert first == second and first is not second
    for model in ("llama-3.1-70b", "llama-3.3-70b", "llama-3.1-70b"):
        for framework in ("litgpt", "hf"):
            est = estimate(Request(model=model, method="qlora", framework=framework), catalog)
            assert est.memory.total > 0


def test_hf_qlora_on_several_cards_under_auto_is_timed_as_zero3(catalog: Catalog) -> None:
    fields = {"model": "llama-3.1-70b", "method": "qlora", "framework": "hf",
              "gpu": "a100-40gb-sxm", "gpu_count": 2, "micro_batch": 2,
              "dataset_tokens": 10**7}
    auto = estimate(Request(**fields), catalog).options[0]
    zero3 = estimate(Request(sharding="zero3", **fields), catalog).options[0]
    assert auto.timing.tokens_per_second == pytest.approx(zero3.timing.tokens_per_second)


def test_unsloth_shards_with_deepspeed_through_the_hf_trainer() -> None:
    request = Request(model="llama-3.1-8b", method="full", framework="unsloth",
                      sharding="zero3", gpu_count=4)
    assert any("DeepSpeed ZeRO" in line for line in changes_for(request))


def test_a_resolved_request_resolves_afresh_under_another_framework() -> None:
    """What a profile filled in is not what the user said: torchtune's pure BF16 does not
    survive a switch to hf."""
    tuned = resolve(Request(model="llama-3.1-8b", method="lora", framework="torchtune"))
    assert tuned.state_precision is StatePrecision.PURE_BF16
    switched = resolve(tuned.model_copy(update={"framework": Framework.HF}))
    assert switched.state_precision is StatePrecision.FP32


@pytest.mark.parametrize("framework", ["torchtune", "torchtitan"])
def test_fsdp2_frameworks_keep_gradients_sharded_while_accumulating(
    framework: str, catalog: Catalog
) -> None:
    def per_gpu(sharding: str, accum: int) -> float:
        request = Request(model="llama-3.1-8b", method="full", framework=framework,
                          gpu="h100-sxm", gpu_count=8, sharding=sharding, grad_accum=accum)
        return estimate(request, catalog).options[0].per_gpu_gb

    assert per_gpu("fsdp", 4) == pytest.approx(per_gpu("fsdp", 1))
    assert per_gpu("fsdp", 4) == pytest.approx(per_gpu("zero3", 4))


def test_hf_fsdp_accumulates_whole_gradients_under_no_sync(catalog: Catalog) -> None:
    def per_gpu(accum: int) -> float:
        request = Request(model="llama-3.1-8b", method="full", framework="hf",
                          gpu="h100-sxm", gpu_count=8, sharding="fsdp", grad_accum=accum)
        return estimate(request, catalog).options[0].per_gpu_gb

    assert per_gpu(4) > per_gpu(1) + 10


def test_fp32_weights_under_a_pure_bf16_framework_keep_fp32_gradients_and_moments(
    catalog: Catalog,
) -> None:
    said = Request(model="llama-3.1-8b", method="full", framework="torchtune", precision="fp32")

    assert resolve(said).state_precision is StatePrecision.FP32
    assert resolve(said.model_copy(update={"precision": Precision.BF16})).state_precision is (
        StatePrecision.PURE_BF16
    )


@pytest.mark.parametrize("framework", ["torchtune", "litgpt", "torchtitan"])
def test_frameworks_whose_recipes_always_shard_run_fsdp_on_several_cards(
    catalog: Catalog, framework: str
) -> None:
    fields = dict(model="llama-3.1-8b", method="full", gpu="h100-sxm", gpu_count=8,
                  framework=framework)
    auto = estimate(Request(**fields), catalog).options[0]
    fsdp = estimate(Request(**fields, sharding="fsdp"), catalog).options[0]
    assert auto.stage is Sharding.FSDP
    assert auto.per_gpu_gb == pytest.approx(fsdp.per_gpu_gb)


def test_hf_runs_ddp_replicas_where_one_card_holds_the_run(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", gpu="h100-sxm", gpu_count=8,
                           framework="hf"), catalog)
    assert est.options[0].stage is Sharding.NONE


def test_a_framework_that_always_shards_still_runs_one_card_unsharded(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", gpu="h100-sxm", gpu_count=1,
                           framework="torchtune"), catalog)
    assert est.options[0].stage is Sharding.NONE


def test_litgpt_qlora_on_several_cards_is_warned_litgpt_refuses_it(catalog: Catalog) -> None:
    fields = dict(model="llama-3.1-8b", method="qlora", framework="litgpt", gpu="h100-sxm",
                  dataset_tokens=10**7)
    several = estimate(Request(**fields, gpu_count=4), catalog)
    one = estimate(Request(**fields, gpu_count=1), catalog)
    assert any("refuses QLoRA on more than one card" in w for w in several.warnings)
    assert not any("refuses QLoRA" in w for w in one.warnings)


def test_torchtitan_with_no_method_said_is_a_full_fine_tune() -> None:
    """Its recipes train every weight; LoRA only when a query names it."""
    unsaid = Request(model="llama-3.1-8b", framework=Framework.TORCHTITAN)
    assert unsaid.effective_method is Method.FULL
    assert any("full fine-tune when no method" in c for c in changes_for(unsaid))
    said = unsaid.model_copy(update={"method": Method.LORA})
    assert said.effective_method is Method.LORA
    assert not any("full fine-tune when no method" in c for c in changes_for(said))


@pytest.mark.parametrize("framework", [f for f in Framework if f is not Framework.TORCHTITAN])
def test_other_frameworks_with_no_method_said_default_to_lora(framework: Framework) -> None:
    assert Request(model="llama-3.1-8b", framework=framework).effective_method is Method.LORA


def test_torchtitan_with_an_adapter_setting_said_is_lora() -> None:
    request = Request(model="llama-3.1-8b", framework=Framework.TORCHTITAN, lora_rank=64)
    assert request.effective_method is Method.LORA


def test_the_adapter_fields_are_those_the_metadata_marks_adapters_only() -> None:
    from engine.request import ADAPTER_FIELDS, field_metas

    assert {n for n, meta in field_metas().items() if meta.adapters_only} == ADAPTER_FIELDS


def test_the_profiles_lora_dropout_is_named_where_the_run_leaves_it_to_the_framework() -> None:
    request = resolve(Request(model="llama-3.1-8b", method="lora", framework="hf"))

    assert "LoRA dropout 0.05" in changes_for(request)


def test_a_lora_dropout_the_run_states_is_not_named_as_the_frameworks() -> None:
    request = resolve(Request(model="llama-3.1-8b", method="lora", framework="hf",
                              lora_dropout=0.0))

    assert not any("LoRA dropout" in c for c in changes_for(request))
