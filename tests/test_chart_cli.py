"""``ftcost QUERY --chart FILE.png``: the chart written next to the text estimate, and
clear exit-2 messages for a file that can't be written."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import pytest

from adapters.cli import main

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


def test_chart_option_writes_a_png_and_says_where(tmp_path: Path):
    target = tmp_path / "memory.png"

    code, out, err = run("70b", "qlora", "50M", "tokens", "--chart", str(target))

    png = target.read_bytes()
    assert code == 0 and err == ""
    assert png.startswith(PNG_SIGNATURE)
    assert struct.unpack(">II", png[16:24]) == (1600, 900)
    assert "Llama 3.1 70B · QLoRA" in out  # the text estimate is still printed
    assert f"chart: {target}, 1600 x 900 px" in out


def test_a_chart_name_with_a_byte_that_is_not_utf8_is_said_escaped(tmp_path: Path):
    name = b"\xff.png".decode("utf-8", "surrogateescape")  # as argv passes the byte on

    code, out, err = run("8b", "lora", "--chart", str(tmp_path / name))

    assert code == 0, err
    assert (tmp_path / name).exists()
    assert f"chart: {tmp_path}/\\xff.png, " in out


def test_a_refused_chart_name_with_a_byte_that_is_not_utf8_is_said_escaped(tmp_path: Path):
    name = b"\xffa.txt".decode("utf-8", "surrogateescape")

    code, _, err = run("8b", "lora", "--chart", str(tmp_path / name))

    assert code == 2
    assert f'"{tmp_path}/\\xffa.txt" should end in .png' in err


def test_chart_option_with_equals_sign_and_json_keeps_stdout_pure_json(tmp_path: Path):
    target = tmp_path / "m.png"

    code, out, err = run("--json", "8b", "lora", f"--chart={target}")

    assert code == 0
    assert json.loads(out)["model"]["id"] == "llama-3.1-8b"
    assert f"chart: {target}" in err and target.read_bytes().startswith(PNG_SIGNATURE)


def test_missing_folder_is_named_and_exits_2(tmp_path: Path):
    target = tmp_path / "nowhere" / "m.png"

    code, out, err = run("70b", "--chart", str(target))

    assert code == 2 and out == ""
    assert f'"{tmp_path / "nowhere"}" does not exist' in err
    assert "Traceback" not in err


def test_a_file_where_the_folder_should_be_is_named(tmp_path: Path):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x")

    code, _, err = run("70b", "--chart", str(blocker / "m.png"))

    assert code == 2 and f'"{blocker}" is a file' in err


def test_a_folder_instead_of_a_file_is_refused(tmp_path: Path):
    folder = tmp_path / "charts.png"
    folder.mkdir()

    code, _, err = run("70b", "--chart", str(folder))

    assert code == 2 and "is a folder" in err


def test_chart_without_a_file_name_says_how_to_give_one():
    code, _, err = run("70b", "qlora", "--chart")

    assert code == 2
    assert "--chart needs a file name ending in .png" in err and "--chart memory.png" in err


def test_a_query_word_taken_for_the_file_is_caught():
    code, _, err = run("--chart", "70b", "qlora")

    assert code == 2 and '"70b" should end in .png' in err


def test_chart_given_twice_is_refused(tmp_path: Path):
    code, _, err = run("70b", "--chart", str(tmp_path / "a.png"), "--chart",
                       str(tmp_path / "b.png"))

    assert code == 2 and "given 2 times" in err


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs /proc")
def test_an_unwritable_place_exits_2_with_the_reason():
    # /proc takes no new files, for root too: refused up front or when writing
    code, _, err = run("0.5b", "--chart", "/proc/ftcost-chart.png")

    assert code == 2
    assert err.startswith('ftcost: Can\'t write the chart to "/proc/ftcost-chart.png"')
    assert "Traceback" not in err


def test_chart_word_in_the_terminal_points_to_the_chart_option(capsys):
    from adapters.cli import main

    assert main(["8b", "qlora", "chart"]) == 2
    err = capsys.readouterr().err
    assert "--chart chart.png" in err and "Traceback" not in err


def test_chart_word_with_the_chart_option_draws_the_file(tmp_path, capsys):
    from adapters.cli import main

    out = tmp_path / "c.png"
    assert main(["8b", "qlora", "chart", "--chart", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
