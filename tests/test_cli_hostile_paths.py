"""File names the terminal is given that the file system refuses or that are not files:
a name over 255 bytes, ``~user`` for no such user, a named pipe no one writes to, a name
that is neither a file nor a torchtune config, ``-``. Each is one ``ftcost:`` line saying
what was wrong and what to give instead, exit 2, never a traceback or a hang; in
``ftcost chat`` the session carries on."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.cli import chat, main
from adapters.trainconfig.files import PIPE_WAIT_S
from tests.helpers import AXOLOTL_QLORA

LONG_NAME = "a" * 300
"""A file name over the 255 bytes a Linux file system allows (ENAMETOOLONG)."""

def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def run_chat(*lines: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    assert chat(list(lines), out, err) == 0
    return out.getvalue(), err.getvalue()


def ftcost(*argv: str, stdin: object = subprocess.DEVNULL,
           timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``ftcost ARGV`` as a user runs it: a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli", *argv], stdin=stdin, capture_output=True,
        text=True, check=False, timeout=timeout,
    )


def one_error_line(err: str) -> str:
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("ftcost: ")
    return err


# --- a file name too long for the file system ------------------------------------------


def test_a_chart_name_over_255_bytes_says_the_name_is_too_long_and_exits_2() -> None:
    code, out, err = run("8b", "lora", "--chart", f"/tmp/{LONG_NAME}.png")

    assert code == 2 and out == ""
    assert "the file name is too long" in one_error_line(err)
    assert "give a shorter name" in err


def test_a_too_long_chart_name_is_quoted_cut_short() -> None:
    _, _, err = run("8b", "lora", "--chart", f"/tmp/{LONG_NAME}.png")

    assert LONG_NAME not in err and "aaaa…" in err


def test_a_too_long_chart_name_in_chat_is_an_error_line_and_the_chat_carries_on() -> None:
    out, err = run_chat(f"chart /tmp/{LONG_NAME}.png", "8b lora 20M tokens")

    assert "the file name is too long" in one_error_line(err)
    assert "Llama 3.1 8B · LoRA" in out


def test_a_config_name_over_255_bytes_says_the_name_is_too_long_and_exits_2() -> None:
    code, out, err = run("--config", LONG_NAME, "h100")

    assert code == 2 and out == ""
    assert "the file name is too long" in one_error_line(err)


def test_a_too_long_name_is_no_traceback_in_a_real_process() -> None:
    proc = ftcost("8b", "lora", "--chart", f"/tmp/{LONG_NAME}.png")

    assert proc.returncode == 2
    assert "the file name is too long" in one_error_line(proc.stderr)


def test_a_nul_in_a_chat_chart_name_is_refused_and_the_chat_carries_on() -> None:
    out, err = run_chat("8b lora 20M tokens", "chart a\0b.png", "with qlora")

    assert "a file name can't hold a NUL character" in one_error_line(err)
    assert "Llama 3.1 8B · QLoRA" in out


# --- ~user for a user that does not exist -------------------------------------------------


def test_a_chart_in_the_home_of_no_such_user_names_the_user_and_asks_for_a_full_path() -> None:
    code, out, err = run("8b", "lora", "--chart", "~nosuchuser/x.png")

    assert code == 2 and out == ""
    assert "there is no user nosuchuser" in one_error_line(err)
    assert "Give a full path" in err


def test_a_chart_in_the_home_of_no_such_user_in_chat_lets_the_chat_carry_on() -> None:
    out, err = run_chat("chart ~nosuchuser/x.png", "8b lora 20M tokens")

    assert "there is no user nosuchuser" in one_error_line(err)
    assert "Llama 3.1 8B · LoRA" in out


# --- a config that is not a regular file -------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_no_one_writes_to_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)

    proc = ftcost("--config", str(pipe), "h100", timeout=30)

    assert proc.returncode == 2
    assert "nothing was written to" in one_error_line(proc.stderr)
    assert "--config /dev/stdin" in proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/stdin"), reason="needs /dev/stdin")
def test_a_config_piped_in_as_dev_stdin_is_read(tmp_path: Path) -> None:
    writer = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert writer.stdin is not None
    writer.stdin.write(AXOLOTL_QLORA.encode())
    writer.stdin.close()

    proc = ftcost("--config", "/dev/stdin", "h100", stdin=writer.stdout, timeout=30)
    writer.wait()
    if writer.stdout is not None:
        writer.stdout.close()

    assert proc.returncode == 0, proc.stderr
    assert "Llama 3.1 8B · QLoRA" in proc.stdout


@pytest.mark.skipif(not os.path.exists("/dev/stdin"), reason="needs /dev/stdin")
def test_a_pipe_that_stays_silent_is_given_up_on_after_the_wait_not_waited_on_forever() -> None:
    silent = subprocess.Popen(["sleep", "60"], stdout=subprocess.PIPE)
    try:
        proc = ftcost("--config", "/dev/stdin", "h100", stdin=silent.stdout,
                      timeout=PIPE_WAIT_S + 30)
    finally:
        silent.kill()
        silent.wait()
        if silent.stdout is not None:
            silent.stdout.close()

    assert proc.returncode == 2
    assert f"nothing came through /dev/stdin in {PIPE_WAIT_S:.0f} s" in one_error_line(
        proc.stderr)


def test_a_folder_given_as_the_config_is_refused(tmp_path: Path) -> None:
    code, _, err = run("--config", str(tmp_path), "h100")

    assert code == 2
    assert f"{tmp_path} is a folder; give the config file." in one_error_line(err)


# --- a name that is neither a file nor a torchtune config's name -------------------------


def test_a_missing_config_without_extension_is_no_such_file_and_no_torchtune_config() -> None:
    code, _, err = run("--config", "/tmp/ftcost-no-such-config", "h100")

    assert code == 2
    assert "can't read /tmp/ftcost-no-such-config: there is no such file" in one_error_line(err)
    assert "not a torchtune config's name either" in err
    assert "I don't know" not in err


def test_a_missing_yaml_config_is_no_such_file() -> None:
    code, _, err = run("--config", "/tmp/ftcost-no-such-config.yml", "h100")

    assert code == 2
    assert "can't read /tmp/ftcost-no-such-config.yml: there is no such file." in err


def test_a_torchtune_config_name_after_config_is_still_read_by_the_query() -> None:
    code, out, err = run("--config", "llama3_1/8B_lora", "h100")

    assert code == 0, err
    assert "Llama 3.1 8B · LoRA" in out


def test_a_torchtune_config_name_with_a_decimal_size_is_read_by_the_query() -> None:
    code, out, err = run("--config", "qwen2_5/1.5B_lora_single_device", "h100")

    assert code == 0, err
    assert "Qwen2.5 1.5B · LoRA" in out


def test_a_dash_for_standard_input_is_refused_saying_how_to_pipe_a_config() -> None:
    code, _, err = run("--config", "-", "h100")

    assert code == 2
    assert '"--config -" is not read as standard input' in one_error_line(err)
    assert "I don't know" not in err
