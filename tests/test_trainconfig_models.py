"""The model a training config names: a name that is no model is refused naming the key
that set it (base_model, model_name_or_path, torchtune's builder) and how to set it, and
a model's own config.json is told apart from a training config."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from adapters.cli import main
from adapters.parse import QueryError
from adapters.trainconfig import ConfigError, read_config
from adapters.trainconfig.ask import builder
from engine.specs import Catalog

HOW_TO_SET = ("a model name or Hugging Face id such as meta-llama/Llama-3.1-8B, or name "
              "the model after the config (e.g. `llama-3.1-8b`).")


def refusal(config_text: str, catalog: Catalog, words: str = "") -> str:
    with pytest.raises(QueryError) as caught:
        builder(read_config(config_text))(words, None, catalog)
    return caught.value.message


def terminal(tmp_path: Path, config_text: str, *words: str) -> tuple[int, str, str]:
    path = tmp_path / "train.yml"
    path.write_text(config_text)
    out, err = io.StringIO(), io.StringIO()
    code = main(["--config", str(path), *words], out, err)
    return code, out.getvalue(), err.getvalue()


# --- a model name that is no model -------------------------------------------------------


@pytest.mark.parametrize("name", ["abc", "help", "chart", "'8'", "models", "new"])
def test_an_unknown_axolotl_base_model_names_the_key_and_how_to_set_it(
    name: str, catalog: Catalog
) -> None:
    message = refusal(f"base_model: {name}\nadapter: lora\n", catalog)
    shown = name.strip("'")
    assert message.startswith(
        f"axolotl config: base_model is '{shown}', which is no model ftcost knows "
        f"(`models` lists them). Set base_model to {HOW_TO_SET}"
    )


@pytest.mark.parametrize(("name", "what"), [("h100", "the GPU"), ("qlora", "the method")])
def test_a_base_model_that_is_another_query_word_says_what_it_names(
    name: str, what: str, catalog: Catalog
) -> None:
    message = refusal(f"base_model: {name}\nadapter: lora\n", catalog)
    assert message.startswith(
        f"axolotl config: base_model is '{name}', which names {what}, not a model. "
        f"Set base_model to {HOW_TO_SET}"
    )


def test_a_trl_model_name_or_path_that_is_no_model_names_that_key(catalog: Catalog) -> None:
    message = refusal("model_name_or_path: abc\nper_device_train_batch_size: 2\n", catalog)
    assert message.startswith("TRL/Transformers config: model_name_or_path is 'abc', which "
                              "is no model ftcost knows")
    assert f"Set model_name_or_path to {HOW_TO_SET}" in message


def test_a_torchtune_builder_of_no_known_model_names_the_builder(catalog: Catalog) -> None:
    message = refusal("model:\n  _component_: torchtune.models.foo.lora_foo_7b\n"
                      "batch_size: 2\n", catalog)
    assert message.startswith(
        "torchtune config: model._component_ is 'torchtune.models.foo.lora_foo_7b', whose "
        "model is foo-7b, which is no model ftcost knows (`models` lists them). Set "
        "model._component_ to a model builder such as "
        "torchtune.models.llama3_1.lora_llama3_1_8b"
    )


def test_the_terminal_names_the_key_not_the_query_word(tmp_path: Path) -> None:
    code, out, err = terminal(tmp_path, "base_model: chart\nadapter: lora\n")
    assert code == 2 and out == ""
    assert err.startswith("ftcost: axolotl config: base_model is 'chart', which is no model")
    assert "--chart" not in err


def test_a_model_in_the_words_still_wins_over_the_configs(catalog: Catalog) -> None:
    config = read_config("base_model: h100\nadapter: lora\n")
    assert builder(config)("8b", None, catalog).model == "llama-3.1-8b"


def test_a_hub_id_is_left_for_the_hub_to_read(catalog: Catalog) -> None:
    config = read_config("base_model: someorg/some-model\nadapter: lora\n")
    with pytest.raises(QueryError) as caught:
        builder(config)("", None, catalog)
    assert caught.value.word == "someorg/some-model"  # the service reads it from the Hub


def test_a_catalog_name_in_any_case_is_read(catalog: Catalog) -> None:
    config = read_config("base_model: Llama-3.1-8B\nadapter: lora\n")
    assert builder(config)("", None, catalog).model == "llama-3.1-8b"


# --- a model's own config.json -----------------------------------------------------------

MODEL_CONFIG = (
    '{"_name_or_path": "Qwen/Qwen2.5-7B", "architectures": ["Qwen2ForCausalLM"], '
    '"hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28, '
    '"model_type": "qwen2", "vocab_size": 152064}'
)


def test_a_models_config_json_says_to_name_the_model_in_the_query() -> None:
    with pytest.raises(ConfigError) as caught:
        read_config(MODEL_CONFIG, "config.json")
    message = str(caught.value)
    assert message.startswith("config.json is a model's config (its architecture: layers, "
                              "sizes), not a training config")
    assert ("Name the model in the query instead, by its Hugging Face Hub id (org/name, "
            "e.g. `ftcost Qwen/Qwen2.5-7B lora`) or a catalog name (`ftcost llama-3.1-8b "
            "lora`; `ftcost models` lists them)") in message


def test_a_model_config_without_a_usable_hub_id_shows_an_example_one() -> None:
    text = MODEL_CONFIG.replace('"Qwen/Qwen2.5-7B"', '"/home/me/ckpt"')
    with pytest.raises(ConfigError) as caught:
        read_config(text, "config.json")
    assert "e.g. `ftcost meta-llama/Llama-3.1-8B lora`" in str(caught.value)
    assert "/home/me/ckpt" not in str(caught.value)
