"""The terminal when its output can't be written: a full disk, a closed stdout or stderr.

Each case runs the command as a user does (a separate process, its stdout pointed at
``/dev/full`` or closed), so the interpreter's own last flush is part of what is tested.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FULL = Path("/dev/full")  # every write fails with ENOSPC ("No space left on device")
needs_dev_full = pytest.mark.skipif(not FULL.exists(), reason="no /dev/full here")


def ftcost(*argv: str, stdout: object, stderr: object = subprocess.PIPE,
           close: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``ftcost ARGV`` with ``stdout``/``stderr`` as given; ``close``: descriptors
    closed before it starts (``ftcost ... >&-``)."""

    def close_fds() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run(
        [sys.executable, "-m", "adapters.cli", *argv], stdout=stdout, stderr=stderr,
        text=True, check=False, preexec_fn=close_fds if close else None,
    )


@needs_dev_full
@pytest.mark.parametrize("argv", [("8b", "lora"), ("--json", "8b", "lora"), ("models",),
                                  ("--help",)])
def test_a_full_disk_is_one_line_on_stderr_saying_why_and_status_1(argv) -> None:
    with FULL.open("w") as full:
        proc = ftcost(*argv, stdout=full)

    assert proc.returncode == 1
    assert proc.stderr == (
        "ftcost: can't write the output: No space left on device. Send it to a terminal, "
        "a file or a pipe that can take it, and run the command again.\n"
    )


def test_a_closed_stdout_is_one_line_on_stderr_not_a_traceback() -> None:
    proc = ftcost("8b", "lora", stdout=None, close=(1,))

    assert proc.returncode == 1
    assert proc.stderr.startswith("ftcost: can't write the output: the stream is closed.")
    assert "Traceback" not in proc.stderr


@needs_dev_full
def test_with_stderr_full_too_the_status_alone_says_it() -> None:
    with FULL.open("w") as full:
        proc = ftcost("8b", "lora", stdout=full, stderr=full)

    assert proc.returncode == 1


def test_with_stdout_and_stderr_closed_the_status_alone_says_it() -> None:
    proc = ftcost("8b", "lora", stdout=None, stderr=None, close=(1, 2))

    assert proc.returncode == 1


def test_a_bad_query_with_stderr_closed_keeps_its_status() -> None:
    proc = ftcost("8b", "lorax", stdout=subprocess.PIPE, stderr=None, close=(2,))

    assert proc.returncode == 2 and proc.stdout == ""


@needs_dev_full
def test_a_chat_whose_output_fills_the_disk_stops_with_status_1() -> None:
    with FULL.open("w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "adapters.cli", "chat"], input="8b lora\nwith full\n",
            stdout=full, stderr=subprocess.PIPE, text=True, check=False,
        )

    assert proc.returncode == 1
    assert proc.stderr.startswith("ftcost: can't write the output: No space left on device.")
