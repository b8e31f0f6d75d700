"""Where a training config is silent its trainer's own default applies, and the reply
says so; every key the reader looks at is listed as read or ignored, as the file wrote
it; switches read alike everywhere; and the JSON names the model the estimate used."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from adapters.cli import main
from adapters.trainconfig import ConfigRead, config_notes, read_config
from adapters.trainconfig.ask import builder
from adapters.trainconfig.load import ConfigError
from engine.choices import Method, Precision, Sharding
from engine.specs import Catalog

AXOLOTL = "base_model: meta-llama/Llama-3.1-8B\n"
TRL = "model_name_or_path: meta-llama/Llama-3.1-8B\noutput_dir: out\n"
LLAMA_FACTORY = "model_name_or_path: meta-llama/Llama-3.1-8B\nfinetuning_type: lora\n"


def read(text: str) -> ConfigRead:
    return read_config(text, "the test config")


def lines(config: ConfigRead) -> dict[str, tuple[str, str]]:
    """Key -> (its value as shown, what it set)."""
    return {k.key: (k.value, k.meaning) for k in config.read}


def listed(config: ConfigRead) -> set[str]:
    return {k.key for k in config.read} | set(config.ignored)


# --- the trainers' defaults ----------------------------------------------------------------


def test_axolotl_defaults_are_axolotls_and_the_reply_says_so() -> None:
    config = read(AXOLOTL + "adapter: lora\n")
    assert (config.fields["epochs"], config.fields["seq_len"]) == (1.0, 512)
    assert (config.fields["micro_batch"], config.fields["grad_checkpointing"]) == (1, False)
    assert lines(config)["num_epochs"] == ("(unset)", "1 epoch (axolotl's default)")
    assert lines(config)["sequence_len"] == ("(unset)", "sequence 512 (axolotl's default)")


def test_trl_defaults_are_the_trainers_and_sftconfigs() -> None:
    config = read(TRL)
    assert (config.fields["micro_batch"], config.fields["seq_len"]) == (8, 1024)
    assert config.fields["epochs"] == 3.0
    assert lines(config)["per_device_train_batch_size"] == (
        "(unset)", "micro-batch 8 (the Trainer's default)")
    assert lines(config)["max_length"][1] == "sequence 1,024 (TRL SFTConfig's default)"
    assert any("seq 4096" in note for note in config.notes)


def test_trl_peft_defaults_apply_only_with_peft() -> None:
    full = read(TRL)
    assert "lora_rank" not in full.fields
    qlora = read(TRL + "use_peft: true\nload_in_4bit: true\n")
    assert (qlora.fields["lora_rank"], qlora.fields["lora_dropout"]) == (16, 0.05)
    assert qlora.fields["double_quant"] is False  # ModelConfig.use_bnb_nested_quant


def test_llama_factory_defaults_are_llama_factorys() -> None:
    config = read(LLAMA_FACTORY)
    assert (config.fields["lora_rank"], config.fields["lora_dropout"]) == (8, 0.0)
    assert (config.fields["seq_len"], config.fields["micro_batch"]) == (2048, 8)
    assert lines(config)["lora_rank"][1] == "LoRA rank 8 (LLaMA-Factory's default)"


def test_llama_factory_without_a_finetuning_type_is_lora_by_its_default() -> None:
    config = read("model_name_or_path: meta-llama/Llama-3.1-8B\ncutoff_len: 1024\n")
    assert config.fields["method"] is Method.LORA
    assert lines(config)["finetuning_type"] == ("(unset)", "LoRA (LLaMA-Factory's default)")


def test_a_config_value_wins_over_the_trainers_default() -> None:
    config = read(TRL + "per_device_train_batch_size: 2\nmax_length: 4096\n")
    assert (config.fields["micro_batch"], config.fields["seq_len"]) == (2, 4096)
    assert lines(config)["per_device_train_batch_size"] == ("2", "micro-batch 2")


def test_words_override_a_trainers_default(catalog: Catalog) -> None:
    request = builder(read(TRL))("bs 2 seq 2048 8x h100 1M tokens", None, catalog)
    assert (request.micro_batch, request.seq_len) == (2, 2048)


# --- max_steps and the epochs --------------------------------------------------------------


def test_max_steps_overrides_the_epochs_and_the_epochs_line_says_so() -> None:
    config = read(AXOLOTL + "adapter: lora\nmax_steps: 200\nnum_epochs: 3\n")
    meaning = lines(config)["num_epochs"][1]
    assert meaning.startswith("3 epochs, only where the run is given in tokens")
    assert "max_steps 200 overrides the epochs, as the Trainer does" in meaning


def test_max_steps_of_minus_one_is_listed_as_no_limit() -> None:
    config = read(TRL + "max_steps: -1\n")
    assert lines(config)["max_steps"][1] == "no step limit: the epochs count the run"


# --- every key the reader looks at is listed ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        (TRL + "use_peft: true\nload_in_4bit: true\n", {"use_peft", "load_in_4bit"}),
        (AXOLOTL + "adapter: qlora\nload_in_4bit: true\nload_in_8bit: false\n",
         {"adapter", "load_in_4bit", "load_in_8bit"}),
        (AXOLOTL + "fsdp:\n  - full_shard\nfsdp_version: 2\nfsdp_config:\n"
         "  offload_params: true\n", {"fsdp", "fsdp_version", "fsdp_config"}),
        (LLAMA_FACTORY + "quantization_bit: 4\nstage: sft\n",
         {"finetuning_type", "quantization_bit", "stage"}),
        ("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
         "  lora_attn_modules: [q_proj, v_proj]\n  apply_lora_to_mlp: true\n"
         "optimizer:\n  _component_: torch.optim.SGD\n  fused: true\n",
         {"model.lora_attn_modules", "model.apply_lora_to_mlp", "optimizer.fused"}),
        ("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
         "enable_activation_checkpointing: true\nac_mode: selective\nac_option: op\n",
         {"ac_mode", "ac_option"}),
        (AXOLOTL + "plugins:\n  - some.other.Plugin\ncut_cross_entropy: false\n",
         {"plugins", "cut_cross_entropy"}),
        (TRL + "torch_dtype: auto\noptim: galore_adamw\nattn_implementation: weird\n",
         {"torch_dtype", "optim", "attn_implementation"}),
    ],
)
def test_every_key_read_is_listed_as_read_or_ignored(text: str, keys: set[str]) -> None:
    config = read(text)
    assert keys <= listed(config)
    assert set(config.ignored).isdisjoint(k.key for k in config.read)


def test_a_fused_step_of_an_unfused_optimizer_is_listed_as_ignored() -> None:
    config = read("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
                  "optimizer:\n  _component_: torch.optim.SGD\n  fused: true\n")
    assert "optimizer.fused" in config.ignored


def test_attention_modules_beside_lora_on_the_mlp_are_listed() -> None:
    config = read("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
                  "  lora_attn_modules: [q_proj, v_proj]\n  apply_lora_to_mlp: true\n")
    assert lines(config)["model.lora_attn_modules"][1] == "with the MLP: counted as all-linear"


# --- switches and values as written ------------------------------------------------------


def test_axolotl_activation_offloading_offloads_activations() -> None:
    config = read(AXOLOTL + "adapter: lora\ngradient_checkpointing: true\n"
                  "activation_offloading: true\n")
    assert config.fields["activation_offload"] is True
    assert "activation_offloading" not in config.ignored


def test_activation_offloading_without_checkpointing_says_it_is_not_counted() -> None:
    config = read(AXOLOTL + "adapter: lora\nactivation_offloading: true\n")
    assert "activation_offload" not in config.fields
    assert any("with gradient checkpointing off" in note for note in config.notes)


def test_trl_activation_offloading_is_read() -> None:
    assert read(TRL + "activation_offloading: true\n").fields["activation_offload"] is True


@pytest.mark.parametrize("written", ['"true"', "'yes'", "true"])
def test_fsdp_offload_params_as_a_string_switch_offloads(written: str) -> None:
    config = read(AXOLOTL + f"fsdp: true\nfsdp_config:\n  fsdp_offload_params: {written}\n")
    assert config.fields["offload"] is True


def test_a_string_reshard_after_forward_false_is_shard_grad_op() -> None:
    config = read(AXOLOTL + 'fsdp_version: 2\nfsdp_config:\n  reshard_after_forward: "false"\n')
    assert config.fields["sharding"] is Sharding.ZERO2


def test_a_block_list_is_echoed_in_flow_style() -> None:
    config = read(AXOLOTL + "adapter: lora\nlora_target_modules:\n  - q_proj\n  - v_proj\n")
    assert lines(config)["lora_target_modules"][0] == "[q_proj, v_proj]"


def test_the_fsdp2_form_shows_the_key_and_value_the_file_wrote() -> None:
    config = read(AXOLOTL + "fsdp_version: 2\nfsdp_config:\n  offload_params: false\n")
    assert lines(config)["fsdp_version"] == ("2", "FSDP2 full shard")
    assert lines(config)["fsdp_config"][0] == "{offload_params: false}"


def test_an_absent_peft_switch_is_shown_unset_not_as_a_value() -> None:
    assert lines(read(TRL))["use_peft"] == ("(unset)",
                                            "full fine-tune (TRL's default: no adapters)")


def test_lora_target_linear_shows_its_own_value() -> None:
    config = read(AXOLOTL + "adapter: lora\nlora_target_linear: true\n")
    assert lines(config)["lora_target_linear"] == ("true", "LoRA on all-linear")


def test_an_8bit_base_takes_an() -> None:
    config = read(LLAMA_FACTORY + "quantization_bit: 8\n")
    assert any(note.startswith("quantization_bit: an 8-bit base") for note in config.notes)


def test_a_dtype_with_mixed_precision_off_says_one_precision() -> None:
    config = read(TRL + "torch_dtype: float32\nbf16: false\n")
    assert config.fields["precision"] is Precision.FP32
    text = " ".join(config_notes(config))
    assert "BF16 assumed" not in text
    assert "train in the dtype they load in (FP32, torch_dtype)" in text


def test_part_of_a_target_set_is_counted_as_the_set_with_a_note() -> None:
    config = read(TRL + 'use_peft: true\nlora_target_modules: ["gate_proj", "up_proj"]\n')
    assert any("gate_proj, up_proj is part of the MLP" in note for note in config.notes)


# --- the JSON names the model used ---------------------------------------------------------


def test_json_config_model_is_the_reading_the_estimate_used(tmp_path: Path) -> None:
    path = tmp_path / "tt.yaml"
    path.write_text("model:\n  _component_: torchtune.models.qwen3.qwen3_0_6b_instruct\n"
                    "batch_size: 2\n")
    out, err = io.StringIO(), io.StringIO()
    assert main(["--json", "--config", str(path)], out, err) == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    assert doc["config"]["model"] == "qwen3-0.6b-instruct"
    assert doc["model"]["id"] == "qwen3-0.6b"


# --- axolotl's batch_size ------------------------------------------------------------------


def test_axolotl_batch_size_sets_the_accumulation_over_the_micro_batch() -> None:
    config = read(AXOLOTL + "adapter: lora\nmicro_batch_size: 4\nbatch_size: 16\n")
    assert (config.fields["micro_batch"], config.fields["grad_accum"]) == (4, 4)
    assert lines(config)["batch_size"] == ("16", "accumulation 4 of micro-batch 4")


def test_axolotl_batch_size_divides_axolotls_default_micro_batch() -> None:
    config = read(AXOLOTL + "adapter: lora\nbatch_size: 8\n")
    assert (config.fields["micro_batch"], config.fields["grad_accum"]) == (1, 8)


def test_axolotl_batch_size_rounds_down_as_axolotl_does_and_says_so() -> None:
    config = read(AXOLOTL + "adapter: lora\nmicro_batch_size: 4\nbatch_size: 10\n")
    assert config.fields["grad_accum"] == 2
    assert "2 left over" in lines(config)["batch_size"][1]


def test_axolotl_batch_size_beside_gradient_accumulation_steps_is_refused_naming_both() -> None:
    with pytest.raises(ConfigError) as err:
        read(AXOLOTL + "adapter: lora\nbatch_size: 16\ngradient_accumulation_steps: 2\n")
    assert "gradient_accumulation_steps = 2 and batch_size = 16" in str(err.value)
    assert "Keep one" in str(err.value)


@pytest.mark.parametrize("value", ["2", "-3", "99999999999"])
def test_axolotl_batch_size_below_the_micro_batch_or_past_the_bound_is_refused(value) -> None:
    with pytest.raises(ConfigError) as err:
        read(AXOLOTL + f"adapter: lora\nmicro_batch_size: 4\nbatch_size: {value}\n")
    assert "between 4 and 16,384" in str(err.value)
