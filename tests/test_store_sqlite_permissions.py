"""The SQLite store holds thread contexts and settings: a file it creates is readable by
its owner only (0600), its ``-wal`` and ``-shm`` files too; an existing file others can
read is used as it is, with a warning saying how to tighten it."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.store_sqlite import OWNER_ONLY, SQLiteStore, create_owner_only


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The umask most systems run with (022), which makes SQLite's own files 0644."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_new_store_file_and_its_wal_files_are_owner_only(tmp_path, usual_umask):
    path = tmp_path / "data" / "ftcost.sqlite3"
    store = SQLiteStore(path)
    await store.open()
    try:
        assert await store.acquire_lock("probe", "me", 60)  # a write: the WAL files appear
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        modes = {p.name: mode(p) for p in files}
    finally:
        await store.close()

    assert modes == {p.name: OWNER_ONLY for p in files}


async def test_an_existing_file_others_can_read_is_kept_with_a_warning(
    tmp_path, usual_umask, caplog
):
    path = tmp_path / "ftcost.sqlite3"
    path.touch()
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        store = SQLiteStore(path)
        await store.open()
        await store.close()

    assert mode(path) == 0o644  # never changed behind the operator's back
    (warning,) = [r.getMessage() for r in caplog.records]
    assert f"the SQLite store {path} is readable by other users (mode 644)" in warning
    assert f"chmod 600 {path}" in warning


async def test_an_existing_owner_only_file_opens_without_a_warning(tmp_path, caplog):
    path = tmp_path / "ftcost.sqlite3"
    store = SQLiteStore(path)
    await store.open()
    await store.close()
    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        again = SQLiteStore(path)
        await again.open()
        await again.close()

    assert caplog.records == []


def test_create_owner_only_never_touches_an_existing_file(tmp_path, usual_umask):
    path = tmp_path / "backup.sqlite3"

    assert create_owner_only(path) is True
    path.write_bytes(b"kept")
    assert create_owner_only(path) is False

    assert mode(path) == OWNER_ONLY and path.read_bytes() == b"kept"


def test_a_backup_copy_is_created_owner_only(tmp_path) -> None:
    import os
    import stat
    import subprocess
    import sys

    store = tmp_path / "state.sqlite3"
    import sqlite3

    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE t (x)")
    dest = tmp_path / "copy.sqlite3"
    env = {**os.environ, "FTCOST_STORE": str(store)}
    done = subprocess.run([sys.executable, "-m", "bot", "backup", str(dest)], env=env,
                          capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
