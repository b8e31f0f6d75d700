"""The terminal's ``--config FILE``: the bytes of the file named, read so that no name
can crash or hang the command.

What is read: a regular file; a pipe (``cat qlora.yml | ftcost --config /dev/stdin``,
a named pipe someone writes to) and a device that answers at once (``/dev/zero``, which
is refused as larger than 64 KB). Each is opened without waiting (a named pipe that no
one writes to reads as empty at once, instead of blocking the open) and read for at most
:data:`PIPE_WAIT_S` seconds. A folder, a terminal, a socket and a disk are refused, and
so is ``-`` (standard input is read as ``/dev/stdin``). Every refusal is a
:class:`ConfigError` that says what was wrong and what to give instead.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time
from typing import Final

from adapters.trainconfig.load import MAX_CONFIG_BYTES, ConfigError, too_large
from catalog.echo import shown

PIPE_WAIT_S: Final = 10.0
"""The longest a pipe or device is read (a config is a few KB, written at once)."""
STDIN_FILE: Final = "/dev/stdin"
TUNE_CONFIG_EXAMPLE: Final = "llama3_1/8B_lora"
PIPE_EXAMPLE: Final = "cat qlora.yml | ftcost --config /dev/stdin h100"
def config_bytes(path: str) -> bytes:
    """The first ``MAX_CONFIG_BYTES`` bytes of the config at ``path``. Raises
    :class:`ConfigError` for a file that can't be read or is too large (its size when
    it is a regular file, "larger than 64 KB" otherwise)."""
    name = shown(path)
    if path == "-":
        raise ConfigError(_no_dash())
    if "\0" in path:
        plain = name.replace("\0", "\\0")
        raise ConfigError(f"can't read {plain}: a file name can't hold a NUL character.")
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ConfigError(_unreadable(path, exc)) from None
    _refuse_kind(info.st_mode, name)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)  # non-blocking: a named pipe with no writer opens at once
    except OSError as exc:
        raise ConfigError(_unreadable(path, exc)) from None
    try:
        info = os.fstat(fd)  # what was opened, should the name have changed meanwhile
        _refuse_kind(info.st_mode, name)
        if os.isatty(fd):
            raise ConfigError(
                f"{name} is a terminal, not a config file: give the file (ftcost --config "
                f"qlora.yml h100), or pipe it in ({PIPE_EXAMPLE})."
            )
        regular = stat.S_ISREG(info.st_mode)
        data = _read(fd, name, regular)
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG_BYTES:
        raise too_large(path, info.st_size if regular else None)
    if not data and stat.S_ISFIFO(info.st_mode):
        raise ConfigError(
            f"nothing was written to {name} (a pipe): give the config file itself, or "
            f"pipe the config in as it is read ({PIPE_EXAMPLE})."
        )
    return data


def _refuse_kind(mode: int, name: str) -> None:
    """Refuse a folder, a socket and a disk; a file, a pipe and a device are read."""
    if stat.S_ISDIR(mode):
        raise ConfigError(f"{name} is a folder; give the config file.")
    if stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        return
    kind = "a socket" if stat.S_ISSOCK(mode) else "a disk" if stat.S_ISBLK(mode) else (
        "not a regular file")
    raise ConfigError(f"{name} is {kind}, not a config file: give the training config's file.")


def _read(fd: int, name: str, regular: bool) -> bytes:
    """Up to ``MAX_CONFIG_BYTES + 1`` bytes of ``fd``; a pipe or device is waited on for
    at most :data:`PIPE_WAIT_S` seconds in all."""
    if regular:
        os.set_blocking(fd, True)
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + PIPE_WAIT_S
    while size <= MAX_CONFIG_BYTES:
        try:
            chunk = os.read(fd, MAX_CONFIG_BYTES + 1 - size)
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                came = (f"{size:,} bytes came through {name}, then nothing more"
                        if size else f"nothing came through {name}")
                raise ConfigError(
                    f"{came} in {PIPE_WAIT_S:.0f} s, and it was never closed (a config is "
                    "read once its writer ends): give the config file itself, or pipe it "
                    f"in as it is read ({PIPE_EXAMPLE})."
                ) from None
            continue
        except OSError as exc:
            raise ConfigError(f"can't read {name}: {exc.strerror or exc}.") from None
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _unreadable(path: str, exc: OSError) -> str:
    """Why the file named can't be read, and what to give instead."""
    name = shown(path)
    if exc.errno == errno.ENAMETOOLONG:
        return (
            f"can't read {name}: the file name is too long (a name can have at most 255 "
            "bytes, a whole path 4,096). Give the config file's real path, e.g. ftcost "
            "--config qlora.yml h100."
        )
    if exc.errno == errno.ENOENT:
        recipe = "" if os.path.splitext(path)[1] else (
            f", and it is not a torchtune config's name either (such as "
            f"{TUNE_CONFIG_EXAMPLE})")
        return (
            f"can't read {name}: there is no such file{recipe}. Give the training config's "
            "path, e.g. ftcost --config qlora.yml h100."
        )
    if exc.errno == errno.ENOTDIR:
        return (
            f"can't read {name}: a part of the path before the file name is not a "
            "folder; give the config file's path."
        )
    return f"can't read {name}: {exc.strerror or exc}."


def _no_dash() -> str:
    if os.path.exists(STDIN_FILE):
        return (
            '"--config -" is not read as standard input: give the file, or pipe it in as '
            f"{STDIN_FILE} ({PIPE_EXAMPLE})."
        )
    return '"--config -" is not read as standard input: give the config file.'
