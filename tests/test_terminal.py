"""The terminal as a front end of the shared service: output that fits 80 and 120
columns, and ``ftcost chat`` answering help, models, gpus and chart as the bots do."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from adapters.cli import CHART_IN_CHAT, CHAT_HELP, chat, main
from adapters.help import EXAMPLES, QUERY_HELP
from adapters.terminal import render_text, terminal_width, wrap
from bot.service import Service

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    *EXAMPLES,
    "8b lora 20M tokens",
    "llama-3.1-405b qlora 50M tokens 8x a100-80gb-sxm",
    "mixtral full 1B tokens",
    "70b full 100M tokens 64 h100 offload",
]


@pytest.fixture(scope="module")
def service() -> Service:
    return Service()


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("query", QUERIES)
def test_the_report_fits_the_terminal_width(service, query, width):
    report = service.answer(query).report
    assert report is not None

    too_long = [line for line in render_text(report, width).splitlines() if len(line) > width]

    assert too_long == []


def test_the_headline_stays_on_one_line_where_it_fits(service):
    report = service.answer("8b lora 20M tokens").report
    assert report is not None and len(report.headline) <= 120

    lines = render_text(report, 120).splitlines()

    assert report.headline in lines


def test_wrapping_keeps_a_number_with_its_unit():
    lines = wrap("on 1x NVIDIA GeForce RTX 5090 32GB (59% of 34.4 GB, roomy)", 50)

    assert lines[-1].startswith("34.4 GB") or "34.4 GB" in lines[0]


def test_the_cost_line_breaks_between_its_parts(service):
    report = service.answer("8b lora 20M tokens").report
    assert report is not None and report.cost_line is not None and len(report.cost_line) > 80

    lines = render_text(report, 80).splitlines()
    start = lines.index(report.cost_line.split(" · ")[0] + " · " + report.cost_line.split(
        " · ")[1])

    assert lines[start + 1].startswith("  ")


def test_piped_output_is_not_wrapped(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)

    assert terminal_width(io.StringIO()) is None


def test_columns_sets_the_width_of_the_command(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()

    assert main(["8b", "lora", "20M", "tokens"], out, io.StringIO()) == 0
    assert max(len(line) for line in out.getvalue().splitlines()) <= 80


def test_a_narrow_columns_value_is_kept_readable(monkeypatch):
    monkeypatch.setenv("COLUMNS", "5")

    assert terminal_width(io.StringIO()) == 40


def test_the_terminal_calls_the_service_not_the_parser_or_engine():
    tree = ast.parse((ROOT / "adapters" / "cli.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}

    assert "bot.service" in imported
    assert not imported & {"adapters.parse", "adapters.query", "engine.estimate"}


# -- ftcost chat -------------------------------------------------------------------------


def run_chat(lines: list[str], service: Service) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    chat(lines, out, err, service=service)
    return out.getvalue(), err.getvalue()


def test_chat_help_shows_the_chat_words_and_the_query_language(service):
    out, err = run_chat(["help"], service)

    assert err == ""
    assert CHAT_HELP in out and QUERY_HELP in out


@pytest.mark.parametrize(("word", "expected"), [("models", "llama-3.1-70b"),
                                                 ("gpus", "h100-sxm"), ("cards", "h100-sxm")])
def test_chat_lists_models_and_gpus(service, word, expected):
    out, err = run_chat([word], service)

    assert err == "" and expected in out


def test_chat_listings_keep_the_estimate_for_followups(service):
    out, _ = run_chat(["8b lora 20M tokens", "gpus", "with qlora"], service)

    assert "Llama 3.1 8B · QLoRA" in out


def test_chat_chart_file_draws_the_estimate_above(service, tmp_path):
    path = tmp_path / "memory.png"

    out, err = run_chat(["8b qlora 20M tokens", f"chart {path}"], service)

    assert err == ""
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"chart: {path}" in out


def test_chat_query_with_chart_file_answers_and_draws(service, tmp_path):
    path = tmp_path / "c.png"

    out, err = run_chat([f"8b qlora 20M tokens chart {path}"], service)

    assert err == "" and "Llama 3.1 8B · QLoRA" in out and path.exists()


def test_chat_chart_without_a_file_says_how_to_give_one(service):
    _, err = run_chat(["8b qlora", "chart"], service)

    assert CHART_IN_CHAT in err


def test_chat_chart_before_any_estimate_says_what_to_ask(service, tmp_path):
    _, err = run_chat([f"chart {tmp_path / 'x.png'}"], service)

    assert "A chart of what?" in err and not (tmp_path / "x.png").exists()


def test_chat_chart_into_a_missing_folder_is_refused_and_the_chat_goes_on(service, tmp_path):
    out, err = run_chat(["8b lora", f"chart {tmp_path / 'no' / 'x.png'}", "with qlora"],
                        service)

    assert "does not exist" in err and "QLoRA" in out


def test_chat_new_starts_over(service):
    out, err = run_chat(["8b lora 20M tokens", "new", "70b qlora"], service)

    assert "Starting over" in out and "Llama 3.1 70B · QLoRA" in out and err == ""
