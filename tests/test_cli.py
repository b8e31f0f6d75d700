"""The terminal front end, run as users run it."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from adapters.cli import chat, main
from tests.imports import modules_loaded


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_query_prints_headline_breakdown_cards_what_ifs_and_warnings() -> None:
    code, out, _ = run("70b", "qlora", "50M", "tokens", "h100")
    assert code == 0
    for section in ("Llama 3.1 70B", "per GPU", "Memory per GPU", "Cards", "What if", "Warnings"):
        assert section in out


def test_json_flag_prints_the_json_document() -> None:
    code, out, _ = run("--json", "70b", "qlora", "50M", "tokens", "h100")
    doc = json.loads(out)
    assert code == 0
    assert doc["options"][0]["gpu"] == "h100-sxm"
    assert doc["compute"]["trained_tokens"] == 150_000_000


def test_bad_query_exits_2_with_the_message_on_stderr() -> None:
    code, out, err = run("70b", "qlora", "h1000")
    assert code == 2 and out == ""
    assert '"h1000"' in err and "Example:" in err


def test_help_shows_usage_and_the_query_language() -> None:
    code, out, _ = run("--help")
    assert code == 0 and "usage: ftcost" in out and "qlora" in out


def test_no_arguments_is_a_usage_error() -> None:
    assert run()[0] == 2


def test_models_and_gpus_list_the_catalog() -> None:
    assert "llama-3.1-70b" in run("models")[1]
    assert "h100-sxm" in run("gpus")[1]


def test_an_option_the_query_does_not_know_is_a_usage_error() -> None:
    code, _, err = run("--frobnicate", "8b")
    assert code == 2 and "--frobnicate" in err


def test_a_misspelt_option_of_ftcost_names_the_one_meant() -> None:
    code, out, err = run("--jsn", "8b", "lora")
    assert code == 2 and out == ""
    assert "unknown option --jsn (did you mean --json?)" in err


def test_an_option_in_capitals_names_the_one_meant() -> None:
    code, out, err = run("--JSON", "8b", "lora")
    assert code == 2 and out == ""
    assert "unknown option --JSON (did you mean --json?)" in err


def test_an_option_whose_dashes_autocorrect_joined_names_the_one_meant() -> None:
    for dash in ("\u2014", "\u2013"):  # em dash, en dash
        code, out, err = run(f"{dash}json", "8b", "lora")
        assert code == 2 and out == ""
        assert f"unknown option {dash}json (did you mean --json?)" in err


def test_framework_with_an_empty_value_is_refused_as_without_one() -> None:
    for framework in (["--framework="], ["--framework", ""], ["--framework"]):
        code, out, err = run("8b", "lora", *framework)
        assert code == 2 and out == ""
        assert err == "ftcost: --framework needs a name, e.g. --framework hf\n"


def test_accelerates_config_file_flag_is_the_querys_not_a_misspelt_config() -> None:
    code, out, err = run("accelerate", "launch", "--config_file", "fsdp2.yaml", "train.py",
                         "8b", "full", "8x", "h100")
    assert code == 0 and "Llama 3.1 8B" in out, err


def test_a_training_script_flag_is_read_as_part_of_the_query() -> None:
    code, out, _ = run("--json", "70b", "full", "--tensor-parallel-size", "8", "16x", "h100")
    assert code == 0
    assert json.loads(out)["request"]["tensor_parallel"] == 8


def test_chat_applies_each_later_line_as_a_followup() -> None:
    out, err = io.StringIO(), io.StringIO()
    chat(["70b qlora 50M tokens h100", "what if 8k seq?", "quit", "8b"], out, err)
    text = out.getvalue()
    assert text.count("Llama 3.1 70B · QLoRA\n") == 2
    assert "seq 8,192" in text and "Llama 3.1 8B" not in text


def test_chat_reports_a_bad_followup_and_keeps_going() -> None:
    out, err = io.StringIO(), io.StringIO()
    chat(["8b lora", "on h1000", "with full"], out, err)
    assert '"h1000"' in err.getvalue()
    assert "Full" in out.getvalue().split("Llama 3.1 8B")[-1]


def test_chat_chart_to_a_file_not_ending_in_png_says_it_should_end_in_png() -> None:
    out, err = io.StringIO(), io.StringIO()
    chat(["8b lora", "chart x.txt"], out, err)
    assert err.getvalue() == (
        'ftcost: The chart is a PNG: "x.txt" should end in .png (e.g. chart memory.png).\n'
    )


def test_console_script_runs_without_a_traceback_on_garbage() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "\x01 ### \u202e"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_framework_option_sets_the_framework_when_the_query_names_none(capsys) -> None:
    assert main(["--json", "--framework", "trl", "8b lora batch 8"]) == 0
    assert json.loads(capsys.readouterr().out)["framework"]["name"] == "hf"


def test_framework_environment_variable_is_the_default_framework(capsys, monkeypatch) -> None:
    monkeypatch.setenv("FTCOST_FRAMEWORK", "torchtune")
    assert main(["--json", "8b lora"]) == 0
    assert json.loads(capsys.readouterr().out)["framework"]["name"] == "torchtune"


def test_a_framework_word_in_the_query_wins_over_the_option(capsys) -> None:
    assert main(["--json", "--framework=torchtune", "8b lora unsloth"]) == 0
    assert json.loads(capsys.readouterr().out)["framework"]["name"] == "unsloth"


def test_an_unknown_framework_is_refused_with_the_names_to_use(capsys) -> None:
    assert main(["--framework", "bogus", "8b lora"]) == 2
    err = capsys.readouterr().err
    assert '"bogus" is not a framework' in err and "torchtune" in err


def test_json_models_and_gpus_print_the_catalog_as_json() -> None:
    models = json.loads(run("--json", "models")[1])
    gpus = json.loads(run("--json", "gpus")[1])
    assert any(m["id"] == "llama-3.1-70b" for m in models)
    assert any(g["id"] == "h100-sxm" and g["price_per_gpu_hour"] for g in gpus)


def test_json_alone_is_a_usage_error_like_no_arguments() -> None:
    assert run("--json")[0] == 2


def test_a_channel_command_in_the_terminal_says_where_it_works() -> None:
    code, _, err = run("set", "framework", "hf")
    assert code == 2
    assert "channel command in Slack and Discord" in err and "--framework" in err


def test_a_torchtune_config_name_after_config_is_read_by_the_query() -> None:
    code, out, _ = run(
        "--json", "tune", "run", "lora_finetune_distributed", "--config", "llama3_1/8B_lora",
        "8x", "a100", "10M", "tokens",
    )
    assert code == 0
    request = json.loads(out)["request"]
    assert (request["model"], request["method"], request["framework"]) == (
        "llama-3.1-8b", "lora", "torchtune"
    )


def test_a_config_file_that_is_not_there_is_still_a_file_that_could_not_be_read() -> None:
    code, _, err = run("--config", "missing-run.yaml", "8b")
    assert code == 2
    assert "can't read missing-run.yaml" in err


def test_a_terminal_query_loads_no_store_and_no_metrics_library() -> None:
    query = ("import io; from adapters.cli import main; "
             "main(['70b', 'qlora', '50M', 'tokens', 'h100'], io.StringIO(), io.StringIO())")

    loaded = modules_loaded(query, ("bot.store", "bot.store_sqlite", "bot.price_store",
                                    "bot.metrics", "prometheus_client"))

    assert loaded == []


def test_a_terminal_query_on_a_catalog_model_runs_without_an_event_loop() -> None:
    """asyncio (with ssl and the socket layer) is a sixth of the command's start-up: only a
    Hub model's query imports it (``Service.answer_offline``)."""
    query = ("import io; from adapters.cli import main; "
             "main(['70b', 'qlora', '50M', 'tokens', 'h100'], io.StringIO(), io.StringIO())")

    assert modules_loaded(query, ("asyncio",)) == []
