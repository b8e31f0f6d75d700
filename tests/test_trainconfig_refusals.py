"""What a training config says that ftcost refuses, as it refuses the same typed words:
preference and RL training, keys that contradict each other, files that are not a
training config (DeepSpeed, accelerate, TOML), and names with control characters. Every
message says what was wrong and how to write it right."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from adapters.cli import main
from adapters.parse import QueryError, Said, parse_query
from adapters.trainconfig import ConfigError, read_config
from adapters.trainconfig.ask import builder
from engine.specs import Catalog

AXOLOTL = "base_model: meta-llama/Llama-3.1-8B\n"
TRL = "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\n"
LLAMA_FACTORY = "model_name_or_path: meta-llama/Llama-3.1-8B\ncutoff_len: 1024\n"


def refused(text: str, name: str = "the test config") -> str:
    with pytest.raises(ConfigError) as caught:
        read_config(text, name)
    return str(caught.value)


# --- preference and RL training ------------------------------------------------------------


@pytest.mark.parametrize("stage", ["dpo", "kto", "rm", "orpo", "simpo"])
def test_llama_factory_preference_stages_are_refused_as_the_word_dpo_is(stage: str) -> None:
    message = refused(LLAMA_FACTORY + f"stage: {stage}\nper_device_train_batch_size: 2\n")
    assert f"stage: {stage} says preference training" in message
    assert "estimate it as SFT at twice the batch" in message
    assert "set stage: sft, with per_device_train_batch_size: 4 (twice 2)" in message


def test_llama_factory_ppo_is_refused_as_reinforcement_learning() -> None:
    message = refused(LLAMA_FACTORY + "stage: ppo\n")
    assert "reinforcement learning" in message and "set stage: sft" in message


@pytest.mark.parametrize("stage", ["sft", "pt"])
def test_llama_factory_sft_and_pretraining_stages_are_read(stage: str) -> None:
    config = read_config(LLAMA_FACTORY + f"stage: {stage}\n")
    assert "stage" in {k.key for k in config.read}


def test_an_unknown_llama_factory_stage_says_the_stages_read() -> None:
    assert "Set stage to sft or pt" in refused(LLAMA_FACTORY + "stage: banana\n")


def test_trl_dpo_keys_are_refused_with_the_batch_to_ask_at() -> None:
    message = refused(TRL + "beta: 0.1\nloss_type: sigmoid\nmax_prompt_length: 512\n"
                      "per_device_train_batch_size: 2\n")
    assert "beta: 0.1, max_prompt_length: 512 and loss_type: sigmoid say preference" in message
    assert "without beta, max_prompt_length, loss_type" in message
    assert "per_device_train_batch_size: 4 (twice 2)" in message


def test_trl_dpo_without_a_batch_doubles_the_trainers_default() -> None:
    assert "per_device_train_batch_size: 16 (twice 8, the Trainer's default)" in refused(
        TRL + "beta: 0.1\n")


def test_trl_grpo_keys_are_refused_as_reinforcement_learning() -> None:
    message = refused(TRL + "num_generations: 8\nmax_prompt_length: 256\n"
                      "max_completion_length: 1024\nuse_vllm: true\n")
    assert "reinforcement learning (PPO, GRPO)" in message
    assert "max_length: 1280 (the prompt and completion)" in message


def test_trl_sft_loss_types_are_not_preference_training() -> None:
    read_config(TRL + "loss_type: chunked_nll\n")


def test_torchtune_rlhf_losses_are_refused_not_read_as_cross_entropy() -> None:
    message = refused(
        "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
        "loss:\n  _component_: torchtune.rlhf.loss.DPOLoss\nbatch_size: 4\n")
    assert "loss._component_: torchtune.rlhf.loss.DPOLoss says preference training" in message
    assert "torchtune.modules.loss.LinearCrossEntropyLoss), with batch_size: 8" in message


def test_axolotl_rl_is_refused() -> None:
    message = refused(AXOLOTL + "adapter: lora\nrl: dpo\nmicro_batch_size: 2\n")
    assert "rl: dpo says preference training" in message
    assert "remove rl: dpo, with micro_batch_size: 4 (twice 2)" in message
    assert "reinforcement learning" in refused(AXOLOTL + "rl: grpo\n")


# --- contradictions ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "keys", "fix"),
    [
        (AXOLOTL + "deepspeed: deepspeed_configs/zero3.json\nfsdp:\n  - full_shard\n"
         "  - auto_wrap\n", ("deepspeed = deepspeed_configs/zero3.json",
                             "fsdp = [full_shard, auto_wrap]"), "remove deepspeed or fsdp"),
        (AXOLOTL + "load_in_4bit: true\n", ("load_in_4bit = true", "adapter = (unset)"),
         "Set adapter: qlora"),
        (AXOLOTL + "adapter: none\nload_in_8bit: true\n", ("load_in_8bit = true",
                                                           "adapter = none"),
         "Set adapter: lora"),
        (TRL + "use_peft: false\nload_in_4bit: true\n", ("load_in_4bit = true",
                                                         "use_peft = false"),
         "Set use_peft: true"),
        (TRL + "load_in_4bit: true\n", ("load_in_4bit = true", "use_peft = (unset)"),
         "Set use_peft: true"),
        (LLAMA_FACTORY + "finetuning_type: full\nquantization_bit: 4\n",
         ("quantization_bit = 4", "finetuning_type = full"), "Set finetuning_type: lora"),
        (AXOLOTL + "adapter: qlora\nload_in_4bit: false\nload_in_8bit: true\n",
         ("adapter = qlora", "load_in_8bit = true"), "Set load_in_4bit: true"),
        (AXOLOTL + "adapter: qlora\nload_in_4bit: false\n",
         ("adapter = qlora", "load_in_4bit = false"), "Set load_in_4bit: true"),
        (AXOLOTL + "adapter: lora\nload_in_4bit: true\nload_in_8bit: true\n",
         ("load_in_4bit = true", "load_in_8bit = true"), "Keep one"),
        (AXOLOTL + "adapter: lora\nbf16: true\nfp16: true\n", ("bf16 = true", "fp16 = true"),
         "set fp16: false for BF16"),
        (TRL + "bf16: true\nfp16: true\n", ("bf16 = true", "fp16 = true"), "Keep one"),
        (TRL + "max_seq_length: 1024\nmax_length: 8192\n",
         ("max_length = 8192", "max_seq_length = 1024"), "Keep one"),
        (AXOLOTL + "sdp_attention: true\neager_attention: true\n",
         ("sdp_attention = true", "eager_attention = true"), "Keep one"),
        (AXOLOTL + "flash_attention: true\nxformers_attention: true\n",
         ("flash_attention = true", "xformers_attention = true"), "Keep one"),
        (AXOLOTL + "gptq: true\n", ("gptq = true", "adapter = (unset)"),
         "Set adapter: lora"),
        ("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n  lora_rank: 64\n",
         ("model._component_ = torchtune.models.llama3_1.llama3_1_8b",
          "model.lora_rank = 64"), "Use torchtune.models.llama3_1.lora_llama3_1_8b"),
    ],
)
def test_contradicting_keys_are_refused_naming_both_and_the_fix(
    text: str, keys: tuple[str, str], fix: str
) -> None:
    message = refused(text)
    assert f"{keys[0]} and {keys[1]} contradict each other" in message
    assert fix in message


def test_the_same_length_under_both_names_is_read() -> None:
    config = read_config(TRL + "max_seq_length: 4096\nmax_length: 4096\n")
    assert config.fields["seq_len"] == 4096


def test_an_8bit_lora_base_is_read_with_a_note_not_refused() -> None:
    config = read_config(AXOLOTL + "adapter: lora\nload_in_8bit: true\n")
    assert any("an 8-bit base is not modelled" in n for n in config.notes)


# --- files that are not a training config ------------------------------------------------


def test_a_deepspeed_json_on_its_own_says_what_to_type() -> None:
    message = refused(
        '{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}, '
        '"gradient_accumulation_steps": "auto", "train_micro_batch_size_per_gpu": "auto"}',
        "ds_zero3.json")
    assert message.startswith("ds_zero3.json is a DeepSpeed config, not a training config")
    assert "`ftcost --config train.yml zero3 offload optimizer 8x h100`" in message
    assert "under `deepspeed:`" in message
    assert "gradient_accumulation_steps" not in message


def test_an_accelerate_config_keeps_its_file_name_and_says_the_words() -> None:
    message = refused("compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\n"
                      "fsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
                      "num_processes: 8\n", "accelerate_fsdp.yaml")
    assert message.startswith("accelerate_fsdp.yaml is an accelerate config")
    assert "`ftcost --config train.yml fsdp 8x h100`" in message


def test_an_unknown_file_keeps_its_file_names_case() -> None:
    assert refused("foo: 1\n", "my.yaml").startswith("my.yaml is not a training config")
    assert refused("foo: 1\n").startswith("The test config is not a training config")


@pytest.mark.parametrize("name", ["torchtitan_llama3_8b.toml", "config.txt"])
def test_toml_is_refused_with_the_torchtitan_words_to_type(name: str) -> None:
    message = refused('[job]\ndump_folder = "./outputs"\n\n[model]\nname = "llama3"\n'
                      'flavor = "8B"\n\n[training]\nseq_len = 8192\n', name)
    assert message.startswith(f"{name} is TOML")
    assert "--training.seq_len 8192" in message and "not valid YAML" not in message


def test_a_deepspeed_stage_auto_asks_for_the_stage() -> None:
    message = refused(AXOLOTL + "deepspeed:\n  zero_optimization:\n    stage: auto\n")
    assert "Set deepspeed.zero_optimization.stage to 0, 1, 2 or 3" in message


def test_a_control_character_in_the_model_names_the_config_key() -> None:
    message = refused('base_model: "meta-llama/Llama-3.1-8B\\x1b[2J"\nadapter: lora\n')
    assert "base_model is" in message and "control character (U+001B)" in message
    assert "Set base_model to a model name" in message


# --- a global batch beside a config ------------------------------------------------------


QLORA = (AXOLOTL + "adapter: qlora\nload_in_4bit: true\nmicro_batch_size: 4\n"
         "gradient_accumulation_steps: 8\nsequence_len: 2048\n")


def test_a_global_batch_divides_by_the_configs_micro_batch(catalog: Catalog) -> None:
    config = read_config(QLORA.replace("gradient_accumulation_steps: 8\n", ""))
    request = builder(config)("global batch size 128 1000 steps 8x h100", None, catalog)
    assert (request.micro_batch, request.grad_accum) == (4, 4)
    assert request.dataset_tokens == 1000 * 128 * 2048


def test_a_global_batch_that_agrees_with_the_config_is_read(catalog: Catalog) -> None:
    request = builder(read_config(QLORA))("global batch size 256 8x h100 1M tokens", None,
                                          catalog)
    assert (request.micro_batch, request.grad_accum) == (4, 8)


def test_a_global_batch_against_the_configs_accumulation_is_refused(catalog: Catalog) -> None:
    with pytest.raises(QueryError) as caught:
        builder(read_config(QLORA))("global batch size 128 8x h100 1M tokens", None, catalog)
    message = caught.value.message
    assert "batch 4 (the config's micro_batch_size)" in message
    assert "the config's gradient_accumulation_steps says 8 (a global batch of 256)" in message
    assert 'add "accum 4" to override it' in message


def test_an_accumulation_in_the_words_overrides_the_configs(catalog: Catalog) -> None:
    request = builder(read_config(QLORA))("global batch size 128 accum 4 8x h100 1M tokens",
                                          None, catalog)
    assert request.grad_accum == 4


def test_a_global_batch_that_does_not_divide_names_the_config_key(catalog: Catalog) -> None:
    with pytest.raises(QueryError) as caught:
        builder(read_config(QLORA))("global batch size 100 8x h100 1M tokens", None, catalog)
    assert "(4, the config's micro_batch_size, x 8 = 32)" in caught.value.message


def test_a_global_batch_uses_the_trainers_default_micro_batch(catalog: Catalog) -> None:
    request = builder(read_config(TRL))("global batch size 128 8x h100 1M tokens", None,
                                        catalog)
    assert (request.micro_batch, request.grad_accum) == (8, 2)
    with pytest.raises(QueryError) as caught:
        builder(read_config(TRL))("global batch size 32 8x h100 1M tokens", None, catalog)
    assert "the Trainer's default per_device_train_batch_size" in caught.value.message


def test_a_global_batch_divides_by_the_configs_data_parallel_ranks(catalog: Catalog) -> None:
    config = read_config(AXOLOTL + "adapter: lora\nmicro_batch_size: 2\n"
                         "tensor_parallel_size: 2\n")
    request = builder(config)("global batch size 8 8x h100 1M tokens", None, catalog)
    assert request.grad_accum == 1  # 8 / (2 x 8 cards / tp 2)


def test_the_terminal_counts_a_global_batch_at_the_configs_micro_batch(tmp_path: Path) -> None:
    path = tmp_path / "ax.yml"
    path.write_text(QLORA.replace("gradient_accumulation_steps: 8\n", ""))
    out, err = io.StringIO(), io.StringIO()
    code = main(["--config", str(path), "global", "batch", "size", "128", "1000", "steps",
                 "8x", "h100"], out, err)
    assert code == 0, err.getvalue()
    assert "1,000 steps = 262M trained tokens" in out.getvalue()


def test_a_global_batch_beside_options_divides_by_the_options_batch() -> None:
    said = Said({"micro_batch": 4}, {"micro_batch": "batch"})
    request = parse_query("8b lora global batch size 64 8x h100", None, said)
    assert (request.micro_batch, request.grad_accum) == (4, 2)
    both = Said({"micro_batch": 4, "grad_accum": 4}, {"micro_batch": "batch",
                                                       "grad_accum": "accum"})
    with pytest.raises(QueryError) as caught:
        parse_query("8b lora global batch size 64 8x h100", None, both)
    assert "the accum option says 4 (a global batch of 128): say one" in caught.value.message
