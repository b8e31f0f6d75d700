"""Estimates from training configs (issue 16): axolotl, TRL/Transformers, torchtune and
LLaMA-Factory read key by key, bounded parsing, and ``ftcost --config FILE [words]``."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from adapters.cli import main
from adapters.parse import QueryError, parse_query
from adapters.trainconfig import (
    MAX_CONFIG_BYTES,
    ConfigError,
    ConfigFormat,
    ConfigRead,
    config_notes,
    read_config,
)
from adapters.trainconfig.ask import builder
from adapters.trainconfig.formats import tune_model_name
from bot.config_questions import answer_config
from bot.replies import ReplyKind
from bot.service import Service
from engine.choices import Framework, LoraTargets, Method, Optimizer, Precision, Sharding
from engine.request import Request
from engine.specs import Catalog

FIXTURES = Path(__file__).parent / "fixtures" / "trainconfig"


def fixture(name: str) -> ConfigRead:
    return read_config((FIXTURES / name).read_text(), name)


def read_yaml(text: str) -> ConfigRead:
    return read_config(text, "the test config")


def keys_read(config: ConfigRead) -> dict[str, str]:
    return {k.key: k.meaning for k in config.read}


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


# --- axolotl, key by key ----------------------------------------------------------------


def test_axolotl_qlora_config_is_read_key_by_key() -> None:
    config = fixture("axolotl_qlora.yml")
    assert config.format is ConfigFormat.AXOLOTL
    assert config.framework is Framework.HF
    assert config.model == ("meta-llama/Meta-Llama-3.1-8B",)
    assert config.fields == {
        "method": Method.QLORA,
        "lora_rank": 32,
        "lora_dropout": 0.05,
        "lora_targets": LoraTargets.ALL_LINEAR,
        "seq_len": 4096,
        "packing": True,
        "micro_batch": 2,
        "grad_accum": 4,
        "epochs": 4.0,
        "optimizer": Optimizer.ADAMW,
        "precision": Precision.BF16,
        "grad_checkpointing": True,
        "flash_attention": True,
    }


def test_axolotl_keys_read_and_ignored_are_listed() -> None:
    config = fixture("axolotl_qlora.yml")
    read = keys_read(config)
    for key in ("base_model", "adapter", "lora_r", "lora_alpha", "lora_dropout",
                "lora_target_linear", "sequence_len", "sample_packing", "micro_batch_size",
                "gradient_accumulation_steps", "num_epochs", "optimizer", "bf16",
                "gradient_checkpointing", "flash_attention"):
        assert key in read, key
    assert {"learning_rate", "datasets", "output_dir", "special_tokens"} <= set(config.ignored)
    assert not set(read) & set(config.ignored)
    [read_line, ignored_line, *_] = config_notes(config)
    assert read_line.startswith("Read from the axolotl config: base_model:")
    assert "learning_rate" in ignored_line


def test_axolotl_without_an_adapter_is_a_full_fine_tune() -> None:
    config = read_yaml("base_model: meta-llama/Llama-3.1-8B\nsequence_len: 1024\n")
    assert config.fields["method"] is Method.FULL


def test_axolotl_lora_with_load_in_4bit_is_qlora() -> None:
    config = read_yaml("base_model: x/y\nadapter: lora\nload_in_4bit: true\n")
    assert config.fields["method"] is Method.QLORA


def test_axolotl_lora_on_a_gptq_checkpoint_is_qlora_on_a_gptq_base() -> None:
    config = read_yaml("base_model: x/y-GPTQ\nadapter: lora\ngptq: true\n")
    assert config.fields["method"] is Method.QLORA
    assert config.fields["gptq"] is True


def test_axolotl_gradient_checkpointing_offload_offloads_activations() -> None:
    config = read_yaml("base_model: x/y\nadapter: lora\ngradient_checkpointing: offload\n")
    assert config.fields["activation_offload"] is True
    assert config.fields["grad_checkpointing"] is True


def test_axolotl_liger_plugin_turns_on_fused_cross_entropy() -> None:
    config = read_yaml(
        "base_model: x/y\nadapter: lora\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\n"
        "liger_fused_linear_cross_entropy: true\n"
    )
    assert config.fields["fused_ce"] is True
    assert "plugins" not in config.ignored


def test_axolotl_fsdp2_with_offload_is_fsdp_with_offload_not_deepspeed() -> None:
    config = read_yaml(
        "base_model: x/y\nfsdp:\n  - full_shard\n  - auto_wrap\nfsdp_version: 2\n"
        "fsdp_config:\n  fsdp_offload_params: true\n"
    )
    assert config.fields["sharding"] is Sharding.FSDP
    assert config.fields["offload"] is True


# --- TRL / Transformers -----------------------------------------------------------------


def test_trl_sft_config_maps_peft_targets_optimizer_and_liger() -> None:
    config = fixture("trl_sft.yaml")
    assert config.format is ConfigFormat.TRL
    assert config.model == ("Qwen/Qwen2.5-7B",)
    f = config.fields
    assert (f["method"], f["lora_rank"], f["lora_targets"]) == (Method.LORA, 16, LoraTargets.QV)
    assert (f["seq_len"], f["packing"], f["micro_batch"], f["grad_accum"]) == (2048, True, 4, 8)
    assert f["optimizer"] is Optimizer.ADAMW_8BIT
    assert f["fused_ce"] is True and f["flash_attention"] is True


def test_training_arguments_json_reads_inline_deepspeed_zero3_offload() -> None:
    config = fixture("hf_training_args.json")
    assert config.format is ConfigFormat.TRL
    assert config.fields["sharding"] is Sharding.ZERO3
    assert config.fields["offload"] is True and config.fields["offload_weights"] is False
    assert config.fields["method"] is Method.FULL
    assert keys_read(config)["deepspeed"] == (
        "DeepSpeed ZeRO-3 with CPU offload of the optimizer only"
    )


def test_trl_load_in_4bit_with_peft_is_qlora() -> None:
    config = read_yaml("model_name_or_path: x/y\nuse_peft: true\nload_in_4bit: true\n")
    assert config.fields["method"] is Method.QLORA


def test_transformers_fsdp_string_with_offload() -> None:
    config = read_yaml(
        "model_name_or_path: x/y\nper_device_train_batch_size: 1\n"
        "fsdp: full_shard auto_wrap offload\n"
    )
    assert config.fields["sharding"] is Sharding.FSDP
    assert config.fields["offload"] is True


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("adamw_bnb_8bit", Optimizer.ADAMW_8BIT),
        ("paged_adamw_8bit", Optimizer.ADAMW_8BIT),
        ("paged_adamw_32bit", Optimizer.ADAMW),
        ("adamw_torch_fused", Optimizer.ADAMW_FUSED),
        ("adamw_torch", Optimizer.ADAMW),
        ("adafactor", Optimizer.ADAFACTOR),
        ("sgd", Optimizer.SGD),
        ("lion_32bit", Optimizer.LION),
    ],
)
def test_optimizer_names_map_to_the_modelled_optimizer(name: str, expected: Optimizer) -> None:
    config = read_yaml(f"model_name_or_path: x/y\noptim: {name}\n")
    assert config.fields["optimizer"] is expected


def test_an_unmodelled_optimizer_keeps_adamw_and_says_so() -> None:
    config = read_yaml("model_name_or_path: x/y\noptim: galore_adamw\n")
    assert "optimizer" not in config.fields
    assert any("galore_adamw is not modelled" in n for n in config.notes)


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ("[q_proj, v_proj]", LoraTargets.QV),
        ("[q_proj, k_proj, v_proj, o_proj]", LoraTargets.ATTENTION),
        ("[q_proj, v_proj, gate_proj, up_proj, down_proj]", LoraTargets.ALL_LINEAR),
        ("all-linear", LoraTargets.ALL_LINEAR),
        ("[gate_proj, up_proj, down_proj]", LoraTargets.MLP),
    ],
)
def test_lora_target_modules_map_to_the_target_sets(targets: str, expected: LoraTargets) -> None:
    config = read_yaml(f"model_name_or_path: x/y\nuse_peft: true\nlora_target_modules: {targets}\n")
    assert config.fields["lora_targets"] is expected


# --- torchtune --------------------------------------------------------------------------


def test_torchtune_recipe_reads_the_builder_and_recipe_keys() -> None:
    config = fixture("torchtune_qlora.yaml")
    assert config.format is ConfigFormat.TORCHTUNE
    assert config.framework is Framework.TORCHTUNE
    assert config.model[0] == "llama3.1-8b"
    f = config.fields
    assert (f["method"], f["lora_rank"], f["lora_targets"]) == (
        Method.QLORA, 8, LoraTargets.ALL_LINEAR)
    assert (f["seq_len"], f["micro_batch"], f["grad_accum"]) == (2048, 2, 8)
    assert f["grad_checkpointing"] is True


def test_torchtunes_linear_cross_entropy_keeps_its_chunks_log_softmax() -> None:
    # LinearCrossEntropyLoss runs F.cross_entropy(logits.float()) per chunk: its FP32
    # log-softmax is kept unless compiled, so it is the profile's loss path, not fused.
    config = fixture("torchtune_qlora.yaml")

    assert "fused_ce" not in config.fields
    assert any("chunked cross-entropy" in key.meaning for key in config.read)


def test_torchtune_selective_op_checkpointing_is_read() -> None:
    config = read_yaml("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
                       "enable_activation_checkpointing: true\nac_mode: selective\n"
                       "ac_option: op\n")
    assert config.fields["selective_checkpointing"] is True


def test_torchtune_selective_checkpointing_every_few_layers_counts_as_full() -> None:
    config = read_yaml("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
                       "enable_activation_checkpointing: true\nac_mode: selective\n"
                       "ac_option: 2\n")
    assert "selective_checkpointing" not in config.fields
    assert any("layer interval" in note for note in config.notes)


@pytest.mark.parametrize(
    ("component", "expected"),
    [
        ("torchtune.models.llama3_1.qlora_llama3_1_8b", (Method.QLORA, "llama-3.1-8b")),
        ("torchtune.models.llama3_3.lora_llama3_3_70b", (Method.LORA, "llama-3.3-70b")),
        ("torchtune.models.qwen2_5.qwen2_5_7b", (Method.FULL, "qwen2.5-7b")),
        ("torchtune.models.llama3.qlora_llama3_8b", (Method.QLORA, "llama-3.1-8b")),
        ("torchtune.models.llama2.lora_llama2_7b", (Method.LORA, "llama-2-7b")),
        ("torchtune.models.gemma2.gemma2_9b", (Method.FULL, "gemma-2-9b")),
        ("torchtune.models.qwen3.lora_qwen3_0_6b_instruct", (Method.LORA, "qwen3-0.6b")),
        ("torchtune.models.qwen3.qwen3_1_7b_base", (Method.FULL, "qwen3-1.7b")),
        ("torchtune.models.qwen2_5.lora_qwen2_5_1_5b_instruct", (Method.LORA, "qwen2.5-1.5b")),
    ],
)
def test_torchtune_builder_names_give_method_and_model(
    component: str, expected: tuple[Method, str]
) -> None:
    method, names = tune_model_name(component) or (None, ())
    model = next(m for m in (catalog_model(n) for n in names) if m is not None)
    assert (method, model) == expected


def catalog_model(name: str) -> str | None:
    try:
        return parse_query(name).model
    except QueryError:
        return None


def test_a_component_path_is_only_read_never_imported() -> None:
    config = read_yaml("model:\n  _component_: os.system\nbatch_size: 1\n")
    assert config.format is ConfigFormat.TORCHTUNE
    assert config.model == ("system",)  # a name, which no catalog or Hub id matches


# --- LLaMA-Factory ----------------------------------------------------------------------


def test_llama_factory_lora_reads_cutoff_target_and_deepspeed_file_name() -> None:
    config = fixture("llamafactory_lora.yaml")
    assert config.format is ConfigFormat.LLAMA_FACTORY
    f = config.fields
    assert (f["method"], f["lora_rank"], f["lora_targets"], f["seq_len"]) == (
        Method.LORA, 8, LoraTargets.ALL_LINEAR, 2048)
    assert f["fused_ce"] is True
    assert (f["sharding"], f["offload"]) == (Sharding.ZERO3, True)
    assert any("read from the file name" in n for n in config.notes)


def test_llama_factory_quantization_bit_4_is_qlora() -> None:
    config = read_yaml("model_name_or_path: x/y\nfinetuning_type: lora\nquantization_bit: 4\n")
    assert config.fields["method"] is Method.QLORA


def test_llama_factory_use_unsloth_sets_the_framework() -> None:
    config = read_yaml("model_name_or_path: x/y\nfinetuning_type: lora\nuse_unsloth: true\n")
    assert config.framework is Framework.UNSLOTH


# --- bounds and errors ------------------------------------------------------------------


def test_a_config_over_64_kb_is_refused_naming_the_formats() -> None:
    text = "base_model: x/y\n" + "# padding\n" * (MAX_CONFIG_BYTES // 10 + 1)
    with pytest.raises(ConfigError, match=r"up to 64 KB.*axolotl"):
        read_yaml(text)


def test_yaml_aliases_are_refused() -> None:
    text = "a: &x [1, 2]\nb: *x\nbase_model: x/y\n"
    with pytest.raises(ConfigError, match="anchors or aliases"):
        read_yaml(text)


def test_a_document_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(ConfigError, match="not a mapping"):
        read_yaml("- just\n- a list\n")


def test_unparseable_text_says_which_line() -> None:
    with pytest.raises(ConfigError, match=r"not valid YAML or JSON \(line 2\)"):
        read_yaml("base_model: x\n  bad: [\n")


def test_an_unknown_format_names_the_formats_read() -> None:
    with pytest.raises(ConfigError, match=r"TRL/Transformers.*torchtune.*LLaMA-Factory"):
        read_yaml("name: my team prices\nprices: {h100: 2}\n")


def test_a_wrongly_typed_value_names_the_key() -> None:
    with pytest.raises(ConfigError, match="lora_r is 'abc', expected a whole number"):
        read_yaml("base_model: x/y\nadapter: lora\nlora_r: abc\n")


def test_a_markdown_code_block_is_unwrapped() -> None:
    config = read_yaml("```yaml\nbase_model: x/y\nadapter: qlora\n```")
    assert config.fields["method"] is Method.QLORA


def test_json_text_is_read() -> None:
    config = read_yaml(json.dumps({"model_name_or_path": "x/y", "num_train_epochs": 2}))
    assert config.fields["epochs"] == 2


def test_deeply_nested_documents_are_refused() -> None:
    with pytest.raises(ConfigError, match="nested more than"):
        read_yaml("base_model: x\nd: " + "[" * 40 + "]" * 40 + "\n")


# --- through the shared service ---------------------------------------------------------


def ask_config(config: ConfigRead, words: str = "") -> Any:
    return asyncio.run(answer_config(Service(), config, words))


def test_the_estimate_uses_every_field_the_config_set() -> None:
    reply = ask_config(fixture("axolotl_qlora.yml"), "20M tokens")
    assert reply.kind is ReplyKind.ESTIMATE
    request: Request = reply.request
    assert request.model == "llama-3.1-8b"
    assert (request.method, request.seq_len, request.micro_batch) == (Method.QLORA, 4096, 2)
    assert request.framework is Framework.HF
    assert request.dataset_tokens == 20_000_000


def test_words_override_the_config() -> None:
    reply = ask_config(fixture("axolotl_qlora.yml"), "lora seq 8k")
    assert (reply.request.method, reply.request.seq_len) == (Method.LORA, 8192)
    assert reply.request.lora_rank == 32  # from the config, not named in the words


def test_the_reply_lists_keys_read_and_ignored() -> None:
    reply = ask_config(fixture("axolotl_qlora.yml"))
    notes = reply.report.notes
    assert notes[0].startswith("Read from the axolotl config:")
    assert notes[1].startswith("Ignored (no effect on the estimate):")


def test_a_config_without_a_model_asks_for_one() -> None:
    reply = ask_config(read_yaml("per_device_train_batch_size: 2\noutput_dir: out\n"))
    assert reply.kind is ReplyKind.ERROR
    assert "names no model" in reply.text and "model_name_or_path" in reply.text


def test_a_config_without_a_model_takes_one_from_the_words() -> None:
    reply = ask_config(read_yaml("per_device_train_batch_size: 2\noutput_dir: out\n"), "70b")
    assert reply.kind is ReplyKind.ESTIMATE
    assert (reply.request.model, reply.request.micro_batch) == ("llama-3.1-70b", 2)


def test_an_out_of_range_value_names_the_config_key() -> None:
    reply = ask_config(read_yaml("base_model: meta-llama/Llama-3.1-8B\nadapter: lora\n"
                                 "lora_r: 100000\n"))
    assert reply.kind is ReplyKind.ERROR
    assert "lora_r = 100000 is out of range" in reply.text


# --- the terminal -----------------------------------------------------------------------


def test_terminal_config_with_words_prints_the_estimate_and_the_keys() -> None:
    code, out, err = cli("--config", str(FIXTURES / "axolotl_qlora.yml"), "h100")
    assert code == 0, err
    assert "Llama 3.1 8B · QLoRA" in out
    assert "Read from the axolotl config" in out


def test_terminal_json_has_the_config_member() -> None:
    code, out, _ = cli("--json", f"--config={FIXTURES / 'trl_sft.yaml'}")
    doc = json.loads(out)
    assert code == 0
    assert doc["config"]["format"] == "trl"
    assert "lora_r" in {k["key"] for k in doc["config"]["read"]}
    assert "learning_rate" in doc["config"]["ignored"]
    assert doc["request"]["lora_targets"] == "qv"


def test_terminal_config_errors_exit_2_with_the_reason(tmp_path: Path) -> None:
    missing = cli("--config", str(tmp_path / "nope.yml"))
    assert missing[0] == 2 and "can't read" in missing[2]
    twice = cli("--config", "a.yml", "--config", "b.yml")
    assert twice[0] == 2 and "given 2 times" in twice[2]
    bare = cli("--config")
    assert bare[0] == 2 and "--config needs a file" in bare[2]


def test_terminal_refuses_a_huge_file_without_reading_it_all(tmp_path: Path) -> None:
    big = tmp_path / "big.yml"
    big.write_bytes(b"base_model: x/y\n" + b"#" * (4 * MAX_CONFIG_BYTES))
    code, _, err = cli("--config", str(big))
    assert code == 2 and "up to 64 KB" in err


def test_steps_with_a_config_count_its_batch_and_accumulation(catalog: Catalog) -> None:
    config = read_config(
        b"model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 4\n"
        b"gradient_accumulation_steps: 2\nmax_length: 2048\nuse_peft: true\n",
        "trl.yaml",
    )
    request = builder(config)("500 steps 4x a100", None, catalog)
    assert request.dataset_tokens == 500 * 4 * 2 * 2048 * 4
    assert request.trained_tokens == request.dataset_tokens


def _steps_config() -> ConfigRead:
    return read_config(
        b"model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 4\n"
        b"gradient_accumulation_steps: 2\nmax_length: 2048\nuse_peft: true\nmax_steps: 500\n",
        "trl.yaml",
    )


def test_a_configs_max_steps_counts_the_run_on_a_named_card_count(catalog: Catalog) -> None:
    request = builder(_steps_config())("4x a100", None, catalog)
    assert request.steps == 500
    assert request.dataset_tokens == 500 * 4 * 2 * 2048 * 4


def test_a_configs_max_steps_without_a_card_count_leaves_the_run_uncounted(
    catalog: Catalog,
) -> None:
    request = builder(_steps_config())("", None, catalog)
    assert request.steps is None
    assert request.dataset_tokens is None


def test_tokens_in_the_words_win_over_a_configs_max_steps(catalog: Catalog) -> None:
    request = builder(_steps_config())("4x a100 50M tokens", None, catalog)
    assert request.steps is None
    assert request.dataset_tokens == 50_000_000


# --- stock configs read as their tools run them (review, stop 34) ----------------------


def test_torchtune_quantize_base_on_a_lora_builder_is_qlora() -> None:
    config = read_yaml("model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n"
                       "  quantize_base: True\n")
    assert config.fields["method"] is Method.QLORA


def test_torchtune_compile_optimizer_in_bwd_and_fused_adamw_are_read() -> None:
    config = read_yaml("model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\n"
                       "optimizer:\n  _component_: torch.optim.AdamW\n  fused: True\n"
                       "optimizer_in_bwd: True\ncompile: True\n")
    f = config.fields
    assert (f["optimizer"], f["optimizer_in_backward"], f["compile"]) == (
        Optimizer.ADAMW_FUSED, True, True)


def test_axolotl_and_trainer_torch_compile_are_read() -> None:
    assert read_yaml("base_model: x/y\ntorch_compile: true\n").fields["compile"] is True
    trl = read_yaml("model_name_or_path: x/y\nuse_peft: true\ntorch_compile: true\n")
    assert trl.fields["compile"] is True


def test_axolotl_flash_attention_off_leaves_transformers_default_attention() -> None:
    config = read_yaml("base_model: x/y\nadapter: lora\nflash_attention: false\n")
    assert "flash_attention" not in config.fields
    assert "SDPA" in keys_read(config)["flash_attention"]


def test_axolotl_eager_attention_keeps_the_scores() -> None:
    config = read_yaml("base_model: x/y\nadapter: lora\neager_attention: true\n")
    assert config.fields["flash_attention"] is False


def test_axolotl_fsdp2_form_without_an_fsdp_list_is_fsdp() -> None:
    config = read_yaml("base_model: x/y\nfsdp_version: 2\nfsdp_config:\n"
                       "  offload_params: true\n  reshard_after_forward: true\n")
    assert (config.fields["sharding"], config.fields["offload"]) == (Sharding.FSDP, True)
    assert "fsdp_version" not in config.ignored


def test_fsdp2_without_resharding_after_forward_is_shard_grad_op() -> None:
    config = read_yaml("base_model: x/y\nfsdp_version: 2\nfsdp_config:\n"
                       "  reshard_after_forward: false\n")
    assert config.fields["sharding"] is Sharding.ZERO2


@pytest.mark.parametrize("switches", ["bf16: false\nfp16: false\n", "bf16: false\n",
                                      "fp16: false\n"])
def test_axolotl_with_bf16_and_fp16_off_trains_in_fp32(switches: str) -> None:
    config = read_yaml(f"base_model: x/y\n{switches}")
    assert config.fields["precision"] is Precision.FP32


def test_torchtune_quantize_base_false_on_a_qlora_builder_is_lora() -> None:
    config = read_yaml("model:\n  _component_: torchtune.models.llama3_1.qlora_llama3_1_8b\n"
                       "  quantize_base: False\n")
    assert config.fields["method"] is Method.LORA


def test_trainer_with_bf16_off_keeps_the_loaded_dtype_and_says_so() -> None:
    config = read_yaml("model_name_or_path: x/y\nbf16: false\nfp16: false\n")
    assert "precision" not in config.fields
    assert "add `fp32`" in keys_read(config)["bf16"]


def test_a_local_model_folder_is_read_by_its_name(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("base_model: /workspace/models/Meta-Llama-3.1-8B\nadapter: lora\n")
    code, out, err = cli("--config", str(path))
    assert code == 0 and "Llama 3.1 8B" in out, err


def test_a_local_model_folder_with_no_model_name_asks_for_one(tmp_path: Path) -> None:
    path = tmp_path / "c.yml"
    path.write_text("base_model: /workspace/ckpt/run-7\nadapter: lora\n")
    code, _, err = cli("--config", str(path))
    assert code == 2 and "local folder" in err and "name the model after the config" in err


def test_axolotl_deepspeed_with_replicas_is_refused_as_two_shardings() -> None:
    with pytest.raises(ConfigError, match="two ways to shard"):
        read_yaml("base_model: x/y\ndeepspeed: deepspeed_configs/zero3_bf16.json\n"
                  "dp_replicate_size: 2\n")


def test_axolotl_max_steps_counts_the_run_as_the_trainers_does() -> None:
    config = read_yaml("base_model: x/y\nadapter: lora\nmax_steps: 100\n")
    assert config.fields["steps"] == 100 and "max_steps" not in config.ignored
