"""``ftcost --config FILE WORDS`` when the words or the file are wrong: the message names
the real mistake (a typo, two GPUs, a key given twice), never a made-up conflict between
the words and the config's model."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from adapters.cli import main
from tests.helpers import AXOLOTL_QLORA

FALSE_CONFLICT = 'conflicts with "meta-llama/Meta-Llama-3.1-8B"'


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def qlora_yml(tmp_path: Path) -> Path:
    path = tmp_path / "axolotl_qlora.yml"
    path.write_text(AXOLOTL_QLORA)
    return path


def with_config(config: Path, words: str) -> tuple[int, str]:
    code, out, err = run("--config", str(config), *words.split())
    assert out == "" and "Traceback" not in err
    return code, err


# --- the words' own mistake, not a conflict with the config's model ----------------------


def test_a_typo_beside_a_model_is_reported_as_the_typo(qlora_yml: Path) -> None:
    code, err = with_config(qlora_yml, "70b qlroa")

    assert code == 2
    assert 'I don\'t know "qlroa". Did you mean qlora?' in err
    assert FALSE_CONFLICT not in err


@pytest.mark.parametrize(("words", "conflict"), [
    ("70b h100 a100", '"a100" conflicts with "h100": both set the GPU'),
    ("70b hf unsloth", '"unsloth" conflicts with "hf": both set the framework'),
    ("70b seq 4k seq 8k", '"seq 8k" conflicts with "seq 4k": both set the sequence length'),
], ids=["two gpus", "two frameworks", "two sequence lengths"])
def test_two_values_beside_a_model_are_reported_as_their_own_conflict(
    qlora_yml: Path, words: str, conflict: str
) -> None:
    code, err = with_config(qlora_yml, words)

    assert code == 2
    assert conflict in err
    assert FALSE_CONFLICT not in err


def test_a_typo_without_a_model_is_reported_as_the_typo(qlora_yml: Path) -> None:
    code, err = with_config(qlora_yml, "qlroa h100")

    assert code == 2
    assert 'I don\'t know "qlroa"' in err


def test_a_model_in_the_words_still_overrides_the_configs(qlora_yml: Path) -> None:
    code, out, _ = run("--config", str(qlora_yml), "70b", "h100")

    assert code == 0
    assert "Llama 3.1 70B · QLoRA" in out


def test_words_without_a_model_take_the_configs(qlora_yml: Path) -> None:
    code, out, _ = run("--config", str(qlora_yml), "h100")

    assert code == 0
    assert "Llama 3.1 8B · QLoRA" in out


# --- a key given twice --------------------------------------------------------------------


def test_a_yaml_key_given_twice_is_refused_naming_the_key_and_both_lines(tmp_path: Path) -> None:
    config = tmp_path / "twice.yml"
    config.write_text(AXOLOTL_QLORA + "adapter: lora\n")
    first = AXOLOTL_QLORA.splitlines().index("adapter: qlora") + 1
    again = len(AXOLOTL_QLORA.splitlines()) + 1

    code, err = with_config(config, "h100")

    assert code == 2
    assert f"sets adapter twice (line {first} and line {again}) to different values" in err
    assert "keep the one you mean and delete the other" in err


def test_a_nested_key_given_twice_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "twice.yml"
    config.write_text(AXOLOTL_QLORA + "deepspeed:\n  zero_optimization:\n    stage: 2\n"
                      "    stage: 3\n")

    code, err = with_config(config, "h100")

    assert code == 2 and "sets stage twice" in err


@pytest.mark.parametrize(("text", "where"), [
    ('{"model_name_or_path": "meta-llama/Llama-3.1-8B",\n'
     ' "per_device_train_batch_size": 1,\n'
     ' "per_device_train_batch_size": 4}\n', "(line 2 and line 3)"),
    ('{"model_name_or_path": "meta-llama/Llama-3.1-8B", '
     '"per_device_train_batch_size": 1, "per_device_train_batch_size": 4}\n',
     "(line 1, column 51 and line 1, column 85)"),
], ids=["on two lines", "on one line, by its columns"])
def test_a_json_key_given_twice_is_refused_saying_where(
    tmp_path: Path, text: str, where: str
) -> None:
    config = tmp_path / "args.json"
    config.write_text(text)

    code, err = with_config(config, "h100")

    assert code == 2
    assert f"sets per_device_train_batch_size twice {where}" in err


def test_a_key_given_twice_with_the_same_value_is_read(tmp_path: Path) -> None:
    config = tmp_path / "same.yml"
    config.write_text(AXOLOTL_QLORA + "adapter: qlora\n")

    code, out, err = run("--config", str(config), "h100")

    assert code == 0, err
    assert "QLoRA" in out


def test_an_inline_deepspeed_json_key_given_twice_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "ds.yml"
    inline = json.dumps({"zero_optimization": {"stage": 2}}).replace(
        '"stage": 2', '"stage": 2, "stage": 3')
    config.write_text(AXOLOTL_QLORA + f"deepspeed: '{inline}'\n")

    code, err = with_config(config, "h100")

    assert code == 2
    assert "deepspeed sets stage twice in its JSON" in err


def test_keys_yaml_reads_as_one_are_refused_naming_both_spellings(tmp_path: Path) -> None:
    config = tmp_path / "same.yml"
    config.write_text(AXOLOTL_QLORA + "1: a\ntrue: b\n")

    code, err = with_config(config, "h100")

    assert code == 2 and "sets 1 (line" in err and "and true (line" in err
    assert "which are read as one key" in err


def test_aliases_are_still_refused_before_duplicates_are_looked_for(tmp_path: Path) -> None:
    config = tmp_path / "alias.yml"
    config.write_text(AXOLOTL_QLORA + "x: &a 1\ny: *a\n")

    code, err = with_config(config, "h100")

    assert code == 2 and "anchors or aliases" in err
