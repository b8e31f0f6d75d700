"""Hostile training configs: values that are not finite, out of range, of the wrong type or
nested past reason are refused with a :class:`ConfigError` that names the key, quotes its
value as the file wrote it and says what to write; nothing else escapes to the front ends
(``answer_shared_config`` catches only ``ConfigError``) and nothing is shown as Python's repr.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from adapters.cli import main
from adapters.trainconfig import MAX_CONFIG_BYTES, ConfigError, ConfigRead, read_config
from adapters.trainconfig.ask import builder
from adapters.trainconfig.load import MAX_DEPTH
from bot.config_questions import answer_config, answer_shared_config
from bot.replies import ReplyKind
from bot.service import Service
from engine.choices import LoraTargets, Sharding
from engine.constants import MAX_STEPS
from engine.specs import Catalog

MODEL = "meta-llama/Llama-3.1-8B"


def axolotl(*lines: str) -> str:
    return "\n".join([f"base_model: {MODEL}", "adapter: lora", *lines]) + "\n"


def trl(**keys: Any) -> str:
    return json.dumps({"model_name_or_path": MODEL, "per_device_train_batch_size": 1, **keys})


def refused(text: str) -> str:
    """The message of the ConfigError reading ``text`` raises."""
    with pytest.raises(ConfigError) as caught:
        read_config(text, "c.yml")
    return str(caught.value)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def shared(text: str) -> Any:
    return asyncio.run(answer_shared_config(Service(), text, "c.yml"))


def ask(config: ConfigRead, words: str = "") -> Any:
    return asyncio.run(answer_config(Service(), config, words))


# --- 1. whole numbers that are infinite or NaN ------------------------------------------


def test_an_infinite_micro_batch_names_the_key_the_value_as_written_and_the_range() -> None:
    message = refused(axolotl("micro_batch_size: .inf"))
    assert "micro_batch_size is '.inf', which is not a finite number" in message
    assert "Set micro_batch_size to a whole number between 1 and 4,096." in message


def test_a_nan_sequence_length_is_refused_naming_the_key() -> None:
    message = refused(axolotl("sequence_len: .nan"))
    assert "sequence_len is '.nan'" in message and "not a finite number" in message


@pytest.mark.parametrize("written", ["Infinity", "NaN", "-Infinity"])
def test_json_non_finite_max_steps_is_refused_as_written(written: str) -> None:
    text = trl().removesuffix("}") + f', "max_steps": {written}}}'
    message = refused(text)
    assert f"max_steps is '{written}'" in message and "whole number between 1 and" in message


def test_a_nan_lora_dropout_is_refused_not_carried_into_the_request() -> None:
    assert "lora_dropout is '.nan'" in refused(axolotl("lora_dropout: .nan"))


def test_the_terminal_reports_an_infinite_value_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text(axolotl("micro_batch_size: .inf"))
    code, _, err = cli("--config", str(path))
    assert code == 2
    assert "micro_batch_size is '.inf'" in err and "Traceback" not in err


def test_a_shared_config_with_an_infinite_value_is_an_error_reply() -> None:
    reply = shared(axolotl("micro_batch_size: .inf"))
    assert reply.kind is ReplyKind.ERROR
    assert "micro_batch_size" in reply.text


# --- 2. nesting past the recursion limit ------------------------------------------------


def test_yaml_brackets_nested_3000_deep_are_refused_as_too_deep() -> None:
    message = refused("[" * 3000 + "]" * 3000)
    assert f"nested more than {MAX_DEPTH} levels deep" in message


def test_json_objects_nested_3000_deep_are_refused_as_too_deep() -> None:
    message = refused('{"a":' * 3000 + "1" + "}" * 3000)
    assert f"nested more than {MAX_DEPTH} levels deep" in message


def test_a_shared_config_nested_3000_deep_is_an_error_reply() -> None:
    reply = shared("[" * 3000 + "]" * 3000)
    assert reply.kind is ReplyKind.ERROR and "nested more than" in reply.text


def test_a_deepspeed_json_string_nested_3000_deep_is_refused_naming_the_key() -> None:
    inner = '{"zero_optimization": ' + "[" * 3000 + "]" * 3000 + "}"
    assert "deepspeed is '" in refused(trl(deepspeed=inner))


# --- 3. max_steps bounded when read -----------------------------------------------------


def test_max_steps_past_the_step_bound_is_refused_naming_max_steps() -> None:
    message = refused(trl(max_steps=1e300))
    assert "max_steps = 1e+300 is out of range" in message
    assert f"Set max_steps to a whole number between 1 and {MAX_STEPS:,}." in message


def test_max_steps_whose_tokens_pass_the_token_bound_names_max_steps_and_the_most_that_fit(
    catalog: Catalog,
) -> None:
    config = read_config(trl(per_device_train_batch_size=64, max_length=8192,
                             max_steps=10**9), "c.json")
    reply = ask(config, "8x h100")
    assert reply.kind is ReplyKind.ERROR
    assert "max_steps = 1000000000 is" in reply.text
    most = 10**15 // (8 * 64 * 8192)
    assert f"Set max_steps to at most {most:,}" in reply.text


def test_max_steps_of_minus_one_leaves_the_run_to_the_epochs() -> None:
    config = read_config(trl(max_steps=-1), "c.json")
    assert "steps" not in config.fields


# --- 4. range errors in plain words -----------------------------------------------------


def test_a_nan_epoch_count_says_key_value_and_range_without_pydantic_text() -> None:
    message = refused(trl().removesuffix("}") + ', "num_train_epochs": NaN}')
    assert "num_train_epochs is 'NaN'" in message
    assert "Set num_train_epochs to a number between 0.001 and 1,000." in message
    assert "Input should" not in message and "nan" not in message


def test_an_out_of_range_lora_rank_says_what_to_set_without_an_unrelated_example() -> None:
    reply = ask(read_config(axolotl("lora_r: 100000"), "c.yml"))
    assert reply.kind is ReplyKind.ERROR
    assert "lora_r = 100000 is out of range: the LoRA rank must be a whole number" in reply.text
    assert "Set lora_r to a whole number between 1 and 8,192." in reply.text
    assert "Example:" not in reply.text


def test_a_negative_zero_dropout_reads_as_zero() -> None:
    config = read_config(axolotl("lora_dropout: -0.0"), "c.yml")
    assert config.fields["lora_dropout"] == 0.0
    assert "-0" not in {k.meaning for k in config.read if k.key == "lora_dropout"}.pop()


# --- 5. wrong types refused, values shown as written ------------------------------------


@pytest.mark.parametrize("modules", [[None, "v_proj"], [1, 2], [], "", {"q": 1}])
def test_lora_target_modules_that_are_not_module_names_are_refused(modules: object) -> None:
    message = refused(trl(use_peft=True, lora_target_modules=modules))
    assert "lora_target_modules is" in message and "a list of module names" in message
    assert "None" not in message and "'v_proj'" not in message


def test_unknown_target_modules_are_noted_by_name_not_as_mlp_layers() -> None:
    config = read_config(trl(use_peft=True, lora_target_modules=["my_proj", "v_proj"]), "c")
    assert config.fields["lora_targets"] is LoraTargets.ALL_LINEAR
    note = next(n for n in config.notes if n.startswith("lora_target_modules"))
    assert "my_proj is not a module ftcost knows" in note and "MLP" not in note


def test_a_numeric_fsdp_value_is_refused_naming_the_options() -> None:
    message = refused(trl(fsdp=5))
    assert "fsdp is '5', expected FSDP options (full_shard" in message


def test_an_unknown_fsdp_word_is_refused() -> None:
    assert "fsdp is 'full_shrad'" in refused(trl(fsdp="full_shrad"))


def test_fsdp_no_shard_is_read_as_unsharded_not_as_full_shard() -> None:
    assert read_config(trl(fsdp="no_shard"), "c").fields["sharding"] is Sharding.NONE


def test_fsdp_hybrid_shard_zero2_as_transformers_spells_it_is_zero2() -> None:
    config = read_config(trl(fsdp="hybrid_shard_zero2 auto_wrap"), "c")
    assert config.fields["sharding"] is Sharding.ZERO2


def test_a_deepspeed_zero_optimization_that_is_not_a_mapping_is_refused_as_written() -> None:
    message = refused(trl(deepspeed={"zero_optimization": [1]}))
    assert "deepspeed.zero_optimization is '[1]'" in message and "{'" not in message


def test_a_deepspeed_list_is_refused() -> None:
    assert "deepspeed is '[1]', expected a DeepSpeed JSON object" in refused(trl(deepspeed=[1]))


def test_a_deepspeed_file_note_writes_single_braces() -> None:
    config = read_config(trl(deepspeed="configs/ds.json"), "c")
    note = next(n for n in config.notes if n.startswith("deepspeed"))
    assert "deepspeed: {...}" in note and "{{" not in note


def test_an_optimizer_mapping_is_refused_quoting_it_as_written() -> None:
    message = refused('{"model_name_or_path": "x/y", "optim": {"a":1}}')
    assert """optim is '{"a":1}', expected an optimizer name""" in message


def test_an_unknown_dtype_is_noted_as_written() -> None:
    config = read_config(trl(torch_dtype="int8"), "c")
    assert any(n.startswith("torch_dtype: int8 is not a dtype") for n in config.notes)


def test_quantization_bit_outside_llama_factorys_choices_is_refused() -> None:
    text = f"model_name_or_path: {MODEL}\nfinetuning_type: lora\nquantization_bit: 7\n"
    assert "quantization_bit is '7', expected one of 2, 3, 4, 5, 6 or 8" in refused(text)


def test_a_torchtune_component_that_is_not_a_string_is_refused() -> None:
    text = "model:\n  _component_: [torchtune.models.llama3_1.lora_llama3_1_8b]\n"
    assert "model._component_ is '[torchtune" in refused(text)


def test_keys_read_echo_values_as_the_file_wrote_them() -> None:
    config = read_config(axolotl("bf16: true", "lora_target_modules: [q_proj, v_proj]"), "c")
    shown = {k.key: k.value for k in config.read}
    assert shown["bf16"] == "true"
    assert shown["lora_target_modules"] == "[q_proj, v_proj]"


def test_odd_top_level_keys_are_listed_as_yaml_spells_them() -> None:
    config = read_config(axolotl("null: 1", ".inf: 2", "true: 3"), "c")
    assert {"null", ".inf", "true"} <= set(config.ignored)


def test_control_characters_in_echoed_text_are_replaced() -> None:
    config = read_config(axolotl('"evil\\u202ekey": 1'), "c")
    assert all("\u202e" not in key for key in config.ignored)


def test_a_model_name_with_a_space_is_quoted_without_python_repr() -> None:
    reply = ask(read_config(trl().replace(MODEL, "my model"), "c"))
    assert "The config's model 'my model' is not a model name" in reply.text
    assert "set model_name_or_path to one" in reply.text


# --- values YAML itself cannot build ----------------------------------------------------


def test_a_5000_digit_integer_is_a_config_error() -> None:
    assert "has a value YAML cannot read" in refused(axolotl("lora_r: " + "9" * 5000))


def test_an_impossible_date_is_a_config_error() -> None:
    assert "has a value YAML cannot read" in refused(axolotl("when: 2024-13-45"))


def test_a_400_digit_epoch_count_is_out_of_range_not_an_overflow() -> None:
    assert "num_epochs = 9999" in refused(axolotl("num_epochs: " + "9" * 400))


# --- 6. the size of an oversize config --------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_file_is_said_to_be_larger_than_64_kb() -> None:
    code, _, err = cli("--config", "/dev/zero")
    assert code == 2
    assert "/dev/zero is larger than 64 KB; ftcost reads configs up to 64 KB" in err


def test_a_large_regular_file_gives_its_real_size(tmp_path: Path) -> None:
    big = tmp_path / "big.yml"
    big.write_bytes(b"base_model: x/y\n" + b"#" * (200 * 1024 - 16))
    code, _, err = cli("--config", str(big))
    assert code == 2 and f"{big} is 200 KB; ftcost reads configs up to 64 KB" in err


def test_oversize_text_in_memory_is_larger_than_64_kb() -> None:
    message = refused("base_model: x/y\n" + "#" * MAX_CONFIG_BYTES)
    assert "is larger than 64 KB" in message


def test_a_config_error_through_the_builder_is_a_query_error_not_a_crash(
    catalog: Catalog,
) -> None:
    config = read_config(axolotl("lora_r: 100000"), "c.yml")
    with pytest.raises(ValueError, match="Set lora_r to"):
        builder(config)("", None, catalog)
