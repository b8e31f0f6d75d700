"""The terminal whose output can't encode the answer (``PYTHONIOENCODING=ascii``, an
old ``LANG=C`` system): the message names the encoding and how to get a UTF-8 one; exit 1
as for any output that can't be written; never "the stream is closed"."""

from __future__ import annotations

import os
import subprocess
import sys


def ftcost(*argv: str, encoding: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli", *argv], capture_output=True, text=True,
        encoding="utf-8", errors="replace", check=False, env=env, timeout=60,
    )


def test_an_ascii_output_names_the_encoding_and_the_fix_and_exits_1() -> None:
    proc = ftcost("70b", "qlora", "50M", "tokens", "h100", encoding="ascii")

    assert proc.returncode == 1
    assert proc.stderr.startswith(
        "ftcost: can't write the output: the output's encoding, ascii, has no character U+"
    )
    assert "PYTHONIOENCODING=utf-8" in proc.stderr
    assert "stream is closed" not in proc.stderr and "Traceback" not in proc.stderr


def test_an_ascii_output_prints_no_half_report() -> None:
    proc = ftcost("70b", "qlora", "50M", "tokens", "h100", encoding="ascii")

    assert proc.stdout == ""


def test_a_utf8_output_prints_the_report() -> None:
    proc = ftcost("70b", "qlora", "50M", "tokens", "h100", encoding="utf-8")

    assert proc.returncode == 0 and "Llama 3.1 70B · QLoRA" in proc.stdout
