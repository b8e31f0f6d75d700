"""Launcher and recipe command lines as ML engineers paste them (torchrun, deepspeed,
accelerate launch, torchtitan, torchtune's ``tune run``, litgpt): the request each
gives, and the refusals that say what to type instead. One behaviour per test, against
the shipped catalog."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.query import launchers, recipes
from catalog.loader import default_catalog
from engine.choices import Framework, Method, ModelPick, Precision, Sharding, StatePrecision
from tests.helpers import fields, parsed, refusal

CAT = default_catalog()


def refused(text: str) -> str:
    message = refusal(text)
    assert "Example: " in message
    return message


# --- the command lines of the brief -------------------------------------------------------


def test_a_torchtitan_command_line_reads_batch_sequence_sharding_and_checkpointing() -> None:
    got = fields(
        "llama3 8b torchtitan --training.local_batch_size 2 --training.seq_len 8192 "
        "--parallelism.data_parallel_shard_degree 8 --activation_checkpoint.mode full 8x h100"
    )

    assert got == {
        "model": "llama-3.1-8b", "method": Method.FULL, "seq_len": 8192, "micro_batch": 2,
        "sharding": Sharding.FSDP, "gpu": "h100-sxm", "gpu_count": 8,
        "framework": Framework.TORCHTITAN, "model_pick": ModelPick.STAND_IN,
    }


def test_torchtitans_config_file_names_the_model() -> None:
    got = fields("torchtitan llama3_8b.toml on 8 H100s")

    assert got["model"] == "llama-3.1-8b"
    assert got["gpu_count"] == 8
    assert got["framework"] is Framework.TORCHTITAN


def test_a_torchtitan_config_path_names_the_model_by_its_file() -> None:
    got = fields("torchtitan --job.config_file ./torchtitan/models/llama3/train_configs/"
                 "llama3_70b.toml 16x h100")

    assert got["model"] == "llama-3.1-70b"


def test_torchtitans_flavor_is_the_model_of_that_size() -> None:
    assert parsed("torchtitan --model.flavor 8B 8x h100").model == "llama-3.1-8b"


def test_torchtitans_model_name_and_flavor_name_the_model_together() -> None:
    assert parsed("torchtitan --model.name llama3 --model.flavor 70B 16x h100").model == (
        "llama-3.1-70b"
    )


def test_a_deepspeed_command_line_reads_cards_and_the_stage_from_the_config_name() -> None:
    got = fields("deepspeed --num_gpus 8 train.py --deepspeed ds_config_zero3.json "
                 "llama-3.1-8b full bf16")

    assert got["sharding"] is Sharding.ZERO3
    assert got["gpu_count"] == 8
    assert got["framework"] is Framework.HF
    assert got["method"] is Method.FULL


def test_an_accelerate_command_line_reads_processes_precision_and_fsdp() -> None:
    got = fields("accelerate launch --num_processes 8 --mixed_precision bf16 --use_fsdp "
                 "8b lora h100")

    assert got == {
        "model": "llama-3.1-8b", "method": Method.LORA, "sharding": Sharding.FSDP,
        "gpu": "h100-sxm", "gpu_count": 8, "framework": Framework.HF,
    }


def test_accelerate_launch_means_the_hf_stack_unless_a_framework_is_said() -> None:
    assert parsed("accelerate launch --num_processes 8 8b lora h100").framework is (
        Framework.HF
    )
    assert parsed("accelerate launch --num_processes 8 8b lora h100 unsloth").framework is (
        Framework.UNSLOTH
    )


def test_torchrun_nproc_per_node_counts_the_cards() -> None:
    got = fields("torchrun --nproc_per_node 8 8b full fsdp h100")

    assert got["gpu_count"] == 8
    assert "nodes" not in got


def test_torchrun_nproc_per_node_times_nnodes_is_the_total() -> None:
    got = fields("torchrun --nnodes 2 --nproc_per_node 8 70b full fsdp h100")

    assert (got["gpu_count"], got["nodes"]) == (16, 2)


def test_accelerates_fsdp_config_keys_read_sharding_and_offload() -> None:
    got = fields("8b full fsdp_sharding_strategy FULL_SHARD fsdp_offload_params true 8x a100")

    assert got["sharding"] is Sharding.FSDP
    assert got["offload"] is True


def test_a_torchtune_distributed_lora_recipe_with_its_config() -> None:
    got = fields("tune run --nproc_per_node 8 lora_finetune_distributed "
                 "--config llama3_1/8B_lora 8x a100")

    assert got == {
        "model": "llama-3.1-8b", "method": Method.LORA, "gpu": "a100-80gb-sxm",
        "gpu_count": 8, "framework": Framework.TORCHTUNE, "model_pick": ModelPick.EXACT,
    }


def test_a_torchtune_single_device_recipe_runs_on_one_card() -> None:
    got = fields("tune run full_finetune_single_device "
                 "--config llama3_1/8B_full_single_device 4090")

    assert (got["method"], got["gpu_count"]) == (Method.FULL, 1)
    assert got["framework"] is Framework.TORCHTUNE


def test_litgpt_finetune_lora_reads_precision_micro_batch_and_devices() -> None:
    got = fields("litgpt finetune_lora meta-llama/Meta-Llama-3.1-8B --precision bf16-true "
                 "--train.micro_batch_size 4 --devices 2 a100")

    assert got == {
        "model": "llama-3.1-8b", "method": Method.LORA,
        "state_precision": StatePrecision.PURE_BF16, "micro_batch": 4,
        "gpu": "a100-80gb-sxm", "gpu_count": 2, "framework": Framework.LITGPT,
        "model_pick": ModelPick.EXACT,
    }


def test_litgpts_plain_finetune_is_its_alias_of_finetune_lora() -> None:
    got = fields("litgpt finetune meta-llama/Llama-3.2-1B --devices 4 l4")

    assert (got["model"], got["method"], got["gpu_count"]) == ("llama-3.2-1b", Method.LORA, 4)
    assert got["framework"] is Framework.LITGPT


# --- cards --------------------------------------------------------------------------------


def test_a_launcher_count_beside_the_same_named_count_is_read_once() -> None:
    assert parsed("torchrun --nproc_per_node 8 8b full 8x h100").gpu_count == 8


def test_a_launcher_count_that_contradicts_the_named_cards_is_refused() -> None:
    message = refused("accelerate launch --num_processes 8 8b lora 4x h100")

    assert '"--num_processes 8" conflicts with "4x h100"' in message
    assert "Pick one" in message


def test_a_per_node_count_on_several_nodes_is_checked_as_a_total() -> None:
    message = refused("torchrun --nproc_per_node 8 --nnodes 2 8b full 8x h100")

    assert "16 cards against 8" in message


def test_a_per_node_count_agrees_with_cards_named_per_node() -> None:
    assert parsed("torchrun --nproc_per_node 8 8b full 2 nodes of 8x h100").gpu_count == 16


def test_two_launcher_counts_that_disagree_are_refused() -> None:
    assert "Pick one" in refused("8b lora --num_processes 4 --nproc_per_node 8 h100")


def test_accelerates_num_machines_are_the_nodes() -> None:
    got = fields("accelerate launch --num_machines 2 --num_processes 16 70b full fsdp h100")

    assert (got["gpu_count"], got["nodes"]) == (16, 2)


def test_the_deepspeed_launchers_num_gpus_is_per_node() -> None:
    got = fields("deepspeed --num_nodes 2 --num_gpus 8 train.py --deepspeed zero3.json "
                 "70b full h100")

    assert (got["gpu_count"], got["nodes"]) == (16, 2)


def test_cuda_visible_devices_count_the_cards() -> None:
    assert parsed("CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py 8b lora a100").gpu_count == 4


def test_cuda_visible_devices_keep_their_ids_apart_from_a_count_after_them() -> None:
    got = fields("8b full h100 CUDA_VISIBLE_DEVICES=0,1 2 nodes")

    assert (got["gpu_count"], got["nodes"]) == (4, 2)


def test_cuda_visible_devices_without_ids_asks_for_them() -> None:
    assert "needs the cards' ids" in refused("cuda_visible_devices 8b full h100")


def test_a_number_before_an_option_is_not_its_value() -> None:
    got = fields("8b full 4090 --nnodes 2 --nproc_per_node 8")

    assert (got["gpu"], got["gpu_count"], got["nodes"]) == ("rtx-4090", 16, 2)


def test_nproc_per_node_gpu_asks_for_the_count() -> None:
    message = refused("torchrun --nproc_per_node=gpu 8b full fsdp h100")

    assert "name the count" in message


def test_nproc_per_node_gpu_takes_the_count_the_query_names() -> None:
    assert parsed("torchrun --nproc_per_node gpu 8b full fsdp 8x h100").gpu_count == 8


def test_a_launcher_count_must_be_a_whole_positive_number() -> None:
    assert "whole number" in refused("8b lora --nproc_per_node 8.5 h100")
    assert "at least one card" in refused("8b lora --nproc_per_node 0 h100")


def test_a_launcher_count_without_a_number_asks_for_one() -> None:
    assert "needs a card count" in refused("8b lora --num_gpus h100")


def test_a_single_device_recipe_on_several_cards_is_refused() -> None:
    message = refused("tune run full_finetune_single_device "
                      "--config llama3_1/8B_full_single_device 8x a100")

    assert '"full_finetune_single_device" conflicts with "8x a100"' in message


# --- torchtitan's shard degree ------------------------------------------------------------


def test_the_shard_degree_alone_gives_the_card_count() -> None:
    got = fields("torchtitan --parallelism.data_parallel_shard_degree 8 8b full h100")

    assert (got["gpu_count"], got["sharding"]) == (8, Sharding.FSDP)


def test_the_shard_degree_times_tensor_parallel_is_the_card_count() -> None:
    got = fields("torchtitan --parallelism.data_parallel_shard_degree 4 "
                 "--parallelism.tensor_parallel_degree 2 8b full h100")

    assert (got["gpu_count"], got["tensor_parallel"]) == (8, 2)


def test_the_shard_degree_with_a_replicate_degree_is_hsdp_over_both() -> None:
    got = fields("torchtitan --parallelism.data_parallel_shard_degree 8 "
                 "--parallelism.data_parallel_replicate_degree 2 70b full h100")

    assert (got["gpu_count"], got["sharding"]) == (16, Sharding.HSDP)


def test_a_shard_degree_of_one_with_replicas_is_plain_data_parallelism() -> None:
    got = fields("torchtitan --parallelism.data_parallel_shard_degree 1 "
                 "--parallelism.data_parallel_replicate_degree 8 8b full h100")

    assert (got["gpu_count"], got["sharding"]) == (8, Sharding.NONE)


def test_a_shard_degree_of_minus_one_shards_over_the_named_cards() -> None:
    got = fields("torchtitan --parallelism.data_parallel_shard_degree -1 8b full 8x h100")

    assert (got["gpu_count"], got["sharding"]) == (8, Sharding.FSDP)


def test_a_shard_degree_that_contradicts_the_cards_names_both_and_the_product() -> None:
    message = refused("torchtitan --parallelism.data_parallel_shard_degree 4 "
                      "--parallelism.tensor_parallel_degree 2 8b full 16x h100")

    assert '"data_parallel_shard_degree 4" conflicts with "16x h100"' in message
    assert "4 x tensor_parallel_degree 2 is 8 cards against 16" in message


def test_a_shard_degree_beside_unsharded_weights_is_refused() -> None:
    message = refused("torchtitan --parallelism.data_parallel_shard_degree 8 ddp 8b full h100")

    assert 'but "ddp" says none' in message


def test_a_stated_weight_sharding_wins_over_the_shard_degrees_fsdp() -> None:
    got = fields("torchtitan --parallelism.data_parallel_shard_degree 8 zero3 8b full h100")

    assert got["sharding"] is Sharding.ZERO3


# --- sharding and precision options -------------------------------------------------------


@pytest.mark.parametrize(("strategy", "sharding"), [
    ("FULL_SHARD", Sharding.FSDP), ("SHARD_GRAD_OP", Sharding.ZERO2),
    ("NO_SHARD", Sharding.NONE), ("1", Sharding.FSDP), ("2", Sharding.ZERO2),
    ("3", Sharding.NONE),
])
def test_fsdp_sharding_strategy_names_and_numbers(strategy: str, sharding: Sharding) -> None:
    assert parsed(f"8b full fsdp_sharding_strategy {strategy} 8x a100").sharding is sharding


def test_fsdp_sharding_strategy_hybrid_shard_is_hsdp() -> None:
    assert parsed("8b full fsdp_sharding_strategy HYBRID_SHARD 16x a100").sharding is (
        Sharding.HSDP
    )


def test_fsdp_sharding_strategy_hybrid_shard_zero2_is_refused() -> None:
    assert "not modeled" in refused("8b full fsdp_sharding_strategy 5 8x a100")


def test_an_fsdp_strategy_beside_another_sharding_is_refused() -> None:
    assert "Pick one" in refused("8b full fsdp_sharding_strategy FULL_SHARD zero2 8x a100")


def test_fsdp_offload_params_false_says_nothing() -> None:
    assert parsed("8b full fsdp fsdp_offload_params false 8x a100").offload is False


def test_accelerates_deepspeed_zero_stage_is_deepspeed_at_that_stage() -> None:
    got = fields("accelerate launch --use_deepspeed --zero_stage 3 --num_processes 8 "
                 "8b full h100")

    assert (got["sharding"], got["framework"]) == (Sharding.ZERO3, Framework.HF)


def test_use_deepspeed_without_a_stage_asks_for_it() -> None:
    assert "needs its ZeRO stage" in refused("accelerate launch --use_deepspeed 8b full h100")


def test_optimizer_offload_alone_keeps_the_weights_on_the_cards() -> None:
    got = fields("accelerate launch --use_deepspeed --zero_stage 3 "
                 "--offload_optimizer_device cpu --num_processes 8 70b full h100")

    assert (got["offload"], got["offload_weights"]) == (True, False)


def test_accelerates_multi_gpu_is_plain_data_parallelism() -> None:
    assert parsed("accelerate launch --multi_gpu --num_processes 8 8b lora h100").sharding is (
        Sharding.NONE
    )


def test_a_named_sharding_wins_over_multi_gpu() -> None:
    assert parsed("accelerate launch --multi_gpu 8b lora fsdp 8x h100").sharding is (
        Sharding.FSDP
    )


def test_mixed_precision_no_trains_in_fp32() -> None:
    assert parsed("accelerate launch --mixed_precision no 8b full 8x h100").precision is (
        Precision.FP32
    )


def test_mixed_precision_fp8_is_float8_training_not_an_fp8_base() -> None:
    got = parsed("accelerate launch --mixed_precision fp8 8b full 8x h100")

    assert (got.float8, got.precision) == (True, Precision.BF16)


def test_lightnings_bf16_mixed_keeps_fp32_states() -> None:
    got = parsed("litgpt finetune_full 8b --precision bf16-mixed a100")

    assert got.state_precision is StatePrecision.FP32
    assert "state_precision" in got.model_fields_set


def test_pure_fp16_precision_is_refused_with_the_precisions_read() -> None:
    assert "bf16-mixed" in refused("litgpt finetune_lora 8b --precision 16-true a100")


# --- config files -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "sharding"), [
    ("ds_config_zero3.json", Sharding.ZERO3), ("zero_2.json", Sharding.ZERO2),
    ("ds_z3_offload.json", Sharding.ZERO3), ("stage1.json", Sharding.ZERO1),
    ("deepspeed_zero3.yaml", Sharding.ZERO3),
])
def test_a_deepspeed_config_name_says_its_stage(name: str, sharding: Sharding) -> None:
    got = parsed(f"8b full --deepspeed {name} 8x h100")

    assert (got.sharding, got.framework) == (sharding, Framework.HF)


def test_offload_in_a_deepspeed_config_name_offloads() -> None:
    assert parsed("8b full --deepspeed ds_config_zero3_offload.json 8x a100").offload is True


def test_a_deepspeed_config_without_a_stage_in_its_name_asks_for_the_stage() -> None:
    assert "needs its ZeRO stage" in refused("deepspeed train.py --deepspeed ds_config.json "
                                             "8b full 8x h100")


def test_a_stage_said_in_words_completes_a_deepspeed_config_without_one() -> None:
    assert parsed("8b full --deepspeed ds_config.json zero2 8x h100").sharding is Sharding.ZERO2


def test_an_fsdp_accelerate_config_name_is_fsdp() -> None:
    assert parsed("accelerate launch --config_file examples/accelerate_configs/fsdp2.yaml "
                  "train.py 8b full 8x h100").sharding is Sharding.FSDP


def test_a_config_file_whose_name_says_nothing_is_refused_with_what_to_say() -> None:
    message = refused("accelerate launch --config_file my.yaml train.py 8b full 8x h100")

    assert '"my.yaml" is a file' in message
    assert "attach a training config" in message


def test_a_training_config_named_for_fsdp_is_refused_not_read_as_fsdp() -> None:
    assert "attach a training config" in refused(
        "accelerate launch -m axolotl.cli.train examples/llama-3/qlora-fsdp-70b.yaml 8x h100")


def test_scripts_are_read_and_ignored() -> None:
    assert fields("python train.py 8b lora") == fields("8b lora")


def test_a_model_path_key_reads_the_model_after_it() -> None:
    assert parsed("deepspeed train.py --model_name_or_path meta-llama/Llama-3.1-8B "
                  "--deepspeed zero3.json full").model == "llama-3.1-8b"


def test_a_checkpoint_dir_names_the_model_by_its_last_parts() -> None:
    assert parsed("litgpt finetune_lora --checkpoint_dir checkpoints/meta-llama/"
                  "Llama-2-7b-hf a100").model == "llama-2-7b"


def test_a_torchtitan_config_of_a_model_not_in_the_catalog_is_refused() -> None:
    assert "not in the catalog" in refused("torchtitan deepseek_v3_16b.toml 8x h100")


def test_torchtitans_debug_model_config_is_refused_with_what_to_name() -> None:
    assert "name the model" in refused("torchtitan debug_model.toml 8x h100")


def test_a_flavor_that_is_not_a_size_is_refused() -> None:
    assert "8B, 70B, 405B" in refused("torchtitan --model.flavor debugmodel 8x h100")


def test_a_model_name_without_a_flavor_asks_for_the_flavor() -> None:
    assert "needs its flavor" in refused("torchtitan --model.name llama3 8x h100")


def test_a_flavor_that_contradicts_the_config_file_is_refused() -> None:
    message = refused("torchtitan llama3_8b.toml --model.flavor 70B 8x h100")

    assert '"--model.flavor 70B" conflicts with "llama3_8b.toml"' in message


# --- torchtune ----------------------------------------------------------------------------


def test_a_lora_recipe_with_a_qlora_config_is_qlora() -> None:
    got = fields("tune run lora_finetune_single_device --config llama2/7B_qlora_single_device "
                 "4090")

    assert (got["model"], got["method"], got["gpu_count"]) == ("llama-2-7b", Method.QLORA, 1)


def test_a_lora_recipe_with_a_full_config_is_refused() -> None:
    message = refused("tune run lora_finetune_distributed --config llama3_1/8B_full 8x a100")

    assert '"lora_finetune_distributed" trains LoRA adapters, but "llama3_1/8B_full"' in message


def test_a_qdora_config_is_qlora_with_dora() -> None:
    got = parsed("tune run lora_finetune_single_device --config llama3/8B_qdora_single_device "
                 "4090")

    assert (got.method, got.dora) == (Method.QLORA, True)


@pytest.mark.parametrize(("config", "model"), [
    ("qwen2_5/7B_lora", "qwen2.5-7b"), ("llama3_2/1B_lora", "llama-3.2-1b"),
    ("phi3/mini_lora", "phi-3-mini"), ("mistral/7B_lora", "mistral-7b"),
    ("recipes/configs/llama3_1/70B_lora.yaml", "llama-3.1-70b"),
])
def test_a_torchtune_config_name_says_the_model(config: str, model: str) -> None:
    assert parsed(f"tune run lora_finetune_distributed --config {config} 8x a100").model == model


def test_a_torchtune_config_of_a_model_not_in_the_catalog_is_refused() -> None:
    assert "not in the catalog" in refused("tune run lora_finetune_distributed "
                                           "--config llama3_2_vision/11B_lora 8x a100")


@pytest.mark.parametrize(("recipe", "fragment"), [
    ("lora_dpo_single_device", "DPO"), ("full_dpo_distributed", "DPO"),
    ("ppo_full_finetune_single_device", "reinforcement learning"),
    ("knowledge_distillation_single_device", "teacher"),
    ("qat_distributed", "quantization-aware"),
])
def test_recipes_that_are_not_supervised_fine_tuning_are_refused(recipe: str,
                                                                  fragment: str) -> None:
    assert fragment in refused(f"tune run {recipe} 8b 8x a100")


def test_a_torchtune_recipe_beside_another_framework_is_refused() -> None:
    assert "Pick one" in refused("tune run lora_finetune_distributed 8b trl 8x a100")


def test_torchtune_overrides_read_as_settings() -> None:
    got = fields("tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device "
                 "batch_size=4 gradient_accumulation_steps=8 dataset.packed=True "
                 "tokenizer.max_seq_len=4096 optimizer.lr=2e-4 4090")

    assert (got["micro_batch"], got["grad_accum"], got["seq_len"]) == (4, 8, 4096)
    assert got["packing"] is True


# --- litgpt -------------------------------------------------------------------------------


def test_litgpt_finetune_full_is_a_full_fine_tune() -> None:
    assert parsed("litgpt finetune_full meta-llama/Llama-3.2-1B --devices 4 l4").method is (
        Method.FULL
    )


def test_litgpt_quantize_nf4_is_qlora_without_double_quantization() -> None:
    got = parsed("litgpt finetune_lora meta-llama/Llama-3.2-1B --quantize bnb.nf4 4090")

    assert (got.method, got.double_quant) == (Method.QLORA, False)


def test_litgpt_quantize_nf4_dq_is_qlora_with_double_quantization() -> None:
    got = parsed("litgpt finetune_lora meta-llama/Llama-3.2-1B --quantize bnb.nf4-dq 4090")

    assert (got.method, got.double_quant) == (Method.QLORA, True)


def test_litgpt_quantize_int8_is_refused_as_an_eight_bit_base() -> None:
    assert "8-bit base" in refused("litgpt finetune_lora 8b --quantize bnb.int8 a100")


@pytest.mark.parametrize("text", [
    "litgpt finetune_adapter meta-llama/Llama-3.2-1B l4",
    "litgpt finetune_adapter_v2 meta-llama/Llama-3.2-1B l4",
    "litgpt finetune adapter meta-llama/Llama-3.2-1B l4",
])
def test_litgpts_adapter_is_refused_with_finetune_lora_offered(text: str) -> None:
    assert "ask for finetune_lora" in refused(text)


def test_litgpt_finetune_lora_with_full_is_refused() -> None:
    assert "Pick one" in refused("litgpt finetune_lora 8b full l4")


def test_litgpts_plain_finetune_keeps_a_method_said() -> None:
    assert parsed("litgpt finetune 8b full --devices 2 h100").method is Method.FULL


def test_litgpt_devices_times_num_nodes_is_the_total() -> None:
    got = fields("litgpt finetune 8b full --devices 2 --num_nodes 2 h100")

    assert (got["gpu_count"], got["nodes"]) == (4, 2)


# --- words that change nothing ------------------------------------------------------------


def test_rendezvous_and_output_options_are_read_and_ignored() -> None:
    assert fields("torchrun --standalone --nproc_per_node=4 --master_addr 10.0.0.1 "
                  "--master_port 29500 --node_rank 0 train.py --output_dir out 8b lora a100"
                  ) == fields("8b lora 4x a100")


def test_python_m_of_a_framework_module_says_that_framework() -> None:
    assert parsed("accelerate launch -m axolotl.cli.train 8b lora 4x h100").framework is (
        Framework.HF
    )


def test_python_m_torch_distributed_run_is_torchrun() -> None:
    assert parsed("python -m torch.distributed.run --nproc_per_node 8 8b full h100"
                  ).gpu_count == 8


# --- order --------------------------------------------------------------------------------

LAUNCH_PHRASES = [
    "8b", "full", "--nproc_per_node 4", "--nnodes 2", "h100", "fsdp_sharding_strategy FULL_SHARD",
    "fsdp_offload_params true", "--mixed_precision bf16", "--training.seq_len 4096",
    "--train.micro_batch_size 2", "train.py", "--master_port 29500", "torchrun",
]


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False))
def test_launcher_phrase_order_does_not_matter(rng: random.Random) -> None:
    expected = parsed(" ".join(LAUNCH_PHRASES))
    shuffled = list(LAUNCH_PHRASES)
    rng.shuffle(shuffled)

    assert parsed(" ".join(shuffled)) == expected


RECIPE_PHRASES = [
    "tune run", "lora_finetune_distributed", "--config llama2/7B_qlora", "--nproc_per_node 8",
    "a100", "batch_size=2",
]


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False))
def test_recipe_phrase_order_does_not_matter(rng: random.Random) -> None:
    expected = parsed(" ".join(RECIPE_PHRASES))
    shuffled = list(RECIPE_PHRASES)
    rng.shuffle(shuffled)

    assert parsed(" ".join(shuffled)) == expected
    assert expected.method is Method.QLORA


def test_every_launcher_and_recipe_word_is_spelled_as_the_tokenizer_reads_it() -> None:
    unreachable = [w for w in launchers.WORDS | recipes.WORDS
                   if w != w.lower() or "_" in w or " " in w]

    assert unreachable == []


@pytest.mark.parametrize("line", [
    "torchrun --nproc_per_node 8 -m torchtitan.train 8b full h100",
    "torchrun --nproc_per_node=8 -m torchtitan.train 8b full h100",
    "accelerate launch --num_processes 8 -m axolotl.cli.train 8b full h100",
])
def test_a_count_followed_by_a_module_flag_is_the_count(line: str) -> None:
    """``-m`` after a count names the module a launcher runs; it is not a million."""
    assert parsed(line).gpu_count == 8


@pytest.mark.parametrize(("line", "offload"), [
    ("tune run --nproc_per_node 4 lora_finetune_distributed --config llama3_1/70B_lora "
     "fsdp_cpu_offload=True h100", True),
    ("tune run --nproc_per_node 4 lora_finetune_distributed --config llama3_1/70B_lora "
     "fsdp_cpu_offload=False h100", False),
    ("torchtitan --training.enable_cpu_offload true 8b full 8x h100", True),
])
def test_the_offload_switches_torchtune_and_torchtitan_users_type_are_read(
    line: str, offload: bool
) -> None:
    assert parsed(line).offload is offload


@pytest.mark.parametrize(("line", "framework"), [
    ("torchrun --nproc_per_node 8 -m torchtitan.train 8b full h100", "torchtitan"),
    ("accelerate launch --num_processes 4 -m axolotl.cli.train 8b lora h100", "hf"),
])
def test_the_module_a_launcher_runs_names_its_framework(line: str, framework: str) -> None:
    assert parsed(line).framework.value == framework
