"""``ftcost org/name ...`` in the terminal: the same resolver, a fake Hub via HF_ENDPOINT."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.cli import chat, main
from tests.fakes.hub_configs import LLAMA_3_1_8B, QWEN1_5_MOE_A2_7B, QWEN2_5_7B_INSTRUCT
from tests.fakes.hub_server import FakeHub, commit_for, hub_in_thread, index_json
from tests.imports import modules_loaded

REPO = "acme/qwen2.5-7b-support-ft"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with hub_in_thread() as fake:
        fake.add(REPO, QWEN2_5_7B_INSTRUCT.config,
                 index=index_json(QWEN2_5_7B_INSTRUCT.index_total_size or 0))
        fake.add("acme/mislabelled", LLAMA_3_1_8B.config, index=index_json(6_425_499_648))
        fake.add("acme/slow", LLAMA_3_1_8B.config, delay_s=5)
        monkeypatch.setenv("HF_ENDPOINT", fake.base_url)
        monkeypatch.setenv("FTCOST_HUB_TIMEOUT", "0.3")
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield fake


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_a_hub_model_gets_the_full_report_with_its_provenance(hub):
    code, out, err = run(REPO, "lora", "20M", "tokens")

    assert (code, err) == (0, "")
    assert out.startswith(f"{REPO} · LoRA\n7.62B params")
    assert (
        f"note: {REPO} read from the Hugging Face Hub (revision main, commit "
        f"{commit_for(REPO)[:12]})"
    ) in out
    assert "note: Matches the checkpoint: 7.62B in model.safetensors.index.json" in out


def test_json_keeps_its_keys_and_names_the_hub_model(hub):
    _, catalog_out, _ = run("--json", "qwen2.5-7b", "lora")
    code, out, _ = run("--json", REPO, "lora")

    doc, catalog_doc = json.loads(out), json.loads(catalog_out)
    assert code == 0
    assert doc.keys() == catalog_doc.keys()
    assert doc["model"].keys() == catalog_doc["model"].keys()
    assert doc["model"]["id"] == REPO and doc["model"]["params"] == 7_615_616_512
    assert doc["memory"] == catalog_doc["memory"]


def test_json_warnings_carry_a_checkpoint_disagreement(hub):
    code, out, _ = run("--json", "acme/mislabelled", "qlora")

    assert code == 0
    assert "150% apart" in json.loads(out)["warnings"][0]


def test_a_missing_model_exits_2_with_the_message_and_no_traceback(hub):
    code, out, err = run("acme/nope", "lora")

    assert (code, out) == (2, "")
    assert err.startswith("ftcost: No model acme/nope on the Hugging Face Hub: check the spelling")


@pytest.mark.parametrize(
    ("repo", "config", "said"),
    [
        ("acme/deep", {**QWEN1_5_MOE_A2_7B.config, "num_hidden_layers": 10**8},
         "ftcost: config.json of acme/deep: num_hidden_layers is 100000000, more than any "
         "real model has (ftcost accepts up to 1,000)"),
        ("acme/wide", {**LLAMA_3_1_8B.config, "hidden_size": 10**200},
         "ftcost: config.json of acme/wide: hidden_size is 1000000000"),
        ("acme/digits", '{"model_type": "llama", "vocab_size": 1' + "0" * 5000 + "}",
         "ftcost: config.json of acme/digits is not valid JSON (a number in it has more than "
         "4,300 digits)"),
    ],
    ids=["1e8-layers", "hidden-1e200", "5000-digits"],
)
def test_a_hostile_config_exits_2_with_the_field_named_and_no_traceback(hub, repo, config, said):
    hub.add(repo, config)

    code, out, err = run(repo, "qlora", "50M", "tokens")

    assert (code, out) == (2, "")
    assert err.startswith(said) and "Traceback" not in err


def test_a_slow_hub_exits_1_saying_to_try_again(hub):
    code, _, err = run("acme/slow", "lora")

    assert code == 1
    assert "ftcost: The Hugging Face Hub did not answer within 0.3 s for acme/slow" in err
    assert "(FTCOST_HUB_TIMEOUT raises the limit)" in err


@pytest.mark.parametrize("value", ["1e-9", "abc", "500"])
def test_a_hub_timeout_the_terminal_cannot_use_exits_2_naming_the_variable(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FTCOST_HUB_TIMEOUT", value)

    code, out, err = run("8b", "lora")

    assert (code, out) == (2, "")
    assert err.startswith("ftcost: FTCOST_HUB_TIMEOUT=") and "0.1 to 120" in err


def test_chat_followups_on_a_hub_model_make_no_new_request(hub):
    out, err = io.StringIO(), io.StringIO()

    chat([f"{REPO} lora 20M tokens", "what if seq 8k", "with qlora"], out, err)

    assert err.getvalue() == ""
    assert out.getvalue().count(f"{REPO} · ") == 3
    assert "seq 8,192" in out.getvalue()
    assert len([h for h in hub.hits() if h.path.endswith("/config.json")]) == 1


def test_the_installed_command_resolves_a_hub_model(hub):
    env = {**os.environ, "HF_ENDPOINT": hub.base_url, "FTCOST_HUB_TIMEOUT": "5"}
    proc = subprocess.run(
        [sys.executable, "-m", "adapters.cli", REPO, "qlora", "h100"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=60, check=False,
    )

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{REPO} · QLoRA") and "Traceback" not in proc.stderr


def test_a_catalog_query_does_not_import_aiohttp():
    query = ("import io; from adapters.cli import main; "
             "main(['8b', 'lora'], io.StringIO(), io.StringIO())")

    assert modules_loaded(query, ("aiohttp",)) == []


@pytest.mark.parametrize(("word", "said"), [
    ("o/n@", "nothing follows it"),
    ("org/name@v..1", '"v..1" is not one'),
])
def test_a_malformed_hub_revision_exits_2_with_the_message_and_no_traceback(
    word: str, said: str
) -> None:
    code, out, err = run(word, "lora", "h100")

    assert code == 2 and out == ""
    assert err.startswith(f'ftcost: "{word}": after "@" comes a branch, tag or commit')
    assert said in err and "Traceback" not in err
