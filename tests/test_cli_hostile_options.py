"""ftcost's own options and its environment given wrongly: ``FTCOST_FRAMEWORK`` set to no
framework, ``--framework`` followed by another option, ``--json=1``, a blank query. The
message says what was wrong (naming the variable or the option) and how to say it right;
exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


# --- FTCOST_FRAMEWORK -----------------------------------------------------------------


def test_a_bad_ftcost_framework_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FTCOST_FRAMEWORK", "xyz")

    code, out, err = run("70b", "qlora", "50M", "tokens", "h100")

    assert code == 2 and out == ""
    assert err.startswith("ftcost: FTCOST_FRAMEWORK=xyz is not a framework: set it to one of ")
    assert "hf" in err and "or unset it." in err


@pytest.mark.parametrize("listing", ["models", "gpus", "cards"])
def test_listings_do_not_read_ftcost_framework(
    monkeypatch: pytest.MonkeyPatch, listing: str
) -> None:
    monkeypatch.setenv("FTCOST_FRAMEWORK", "xyz")

    code, out, err = run(listing)

    assert code == 0 and err == "" and out


def test_a_json_listing_does_not_read_ftcost_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FTCOST_FRAMEWORK", "xyz")

    code, out, err = run("--json", "gpus")

    assert code == 0 and err == "" and out.startswith("[")


def test_the_framework_option_wins_over_a_bad_ftcost_framework(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FTCOST_FRAMEWORK", "xyz")

    code, _, err = run("--framework", "hf", "8b", "lora")

    assert code == 0, err


def test_a_bad_framework_option_is_still_worded_as_the_option() -> None:
    code, _, err = run("--framework", "xyz", "8b", "lora")

    assert code == 2
    assert err.startswith('ftcost: "xyz" is not a framework: say one of ')


# --- options without the value they need, or with one they take none of -------------------


def test_framework_followed_by_json_says_framework_needs_a_name() -> None:
    code, _, err = run("--framework", "--json", "70b", "qlora", "h100")

    assert code == 2
    assert err == "ftcost: --framework needs a name, e.g. --framework hf\n"


def test_chart_followed_by_json_says_chart_needs_a_file() -> None:
    code, _, err = run("--chart", "--json", "70b", "qlora", "h100")

    assert code == 2 and err.startswith("ftcost: --chart needs a file name")


def test_json_with_a_value_says_json_takes_none() -> None:
    code, _, err = run("--json=1", "70b", "qlora", "h100")

    assert code == 2
    assert err.startswith('ftcost: --json takes no value ("--json=1"): write --json alone')
    assert "I don't know" not in err


# --- a blank query is no query ---------------------------------------------------------


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_a_blank_query_is_a_usage_error_as_no_arguments_are(blank: str) -> None:
    code, out, _ = run(blank)

    assert code == 2 == run()[0]
    assert out.startswith("usage: ftcost")


def test_help_still_exits_0() -> None:
    assert run("--help")[0] == 0
    assert run("help")[0] == 0


def test_json_alone_is_still_a_usage_error() -> None:
    assert run("--json")[0] == 2


# --- words and options in the wrong place -------------------------------------------------


def test_a_framework_given_twice_differently_is_refused() -> None:
    code, out, err = run("--framework", "xyz", "--framework", "hf", "8b", "lora")

    assert code == 2 and out == ""
    assert err == 'ftcost: --framework was given 2 times ("xyz", "hf"); give it once.\n'


def test_the_same_framework_given_twice_is_read_once() -> None:
    code, _, err = run("--framework", "hf", "--framework", "hf", "8b", "lora")

    assert code == 0, err


@pytest.mark.parametrize("argv", [("--json", "chat"), ("chat", "--framework", "hf")])
def test_the_chat_with_options_says_it_takes_none(argv: tuple[str, ...]) -> None:
    code, out, err = run(*argv)

    assert code == 2 and out == ""
    assert err.startswith("ftcost: the chat takes no options: run ftcost chat alone")


def test_a_chart_for_a_listing_says_a_listing_has_none(tmp_path: Path) -> None:
    code, out, err = run("models", "--chart", str(tmp_path / "m.png"))

    assert code == 2 and out == ""
    assert "a listing has none" in err
    assert not (tmp_path / "m.png").exists()


def test_the_chats_chart_words_in_a_one_shot_command_point_to_the_option(
    tmp_path: Path,
) -> None:
    png = str(tmp_path / "k.png")
    code, out, err = run("70b", "qlora", "chart", png)

    assert code == 2 and out == ""
    assert f"it is an option: ftcost 70b qlora --chart {png}" in err


def test_ctrl_c_while_the_command_is_still_loading_exits_130_without_a_traceback() -> None:
    """A KeyboardInterrupt raised inside the import of the terminal front end (as Ctrl-C
    in its first few hundred milliseconds raises one) goes through the real entry point."""
    interrupt_the_import = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'adapters.cli':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from adapters.launch import main\n"
        "sys.exit(main())\n"
    )
    done = subprocess.run([sys.executable, "-c", interrupt_the_import], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])

    assert (done.returncode, done.stdout, done.stderr) == (130, "", "")


def test_help_with_json_is_one_json_document() -> None:
    code, out, err = run("--json", "help")

    assert code == 0, err
    doc = json.loads(out)
    assert doc["kind"] == "help" and "70b qlora 50M tokens h100" in doc["text"]
