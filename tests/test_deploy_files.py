"""The container files: no Docker engine runs here, so these read the Dockerfile, the
compose file and .dockerignore as text and check what a reviewer would."""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bot.config_load import load_config

ROOT = Path(__file__).resolve().parent.parent


def instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` with continuation lines joined and comments dropped."""
    text = (ROOT / "Dockerfile").read_text()
    text = re.sub(r"\\\n", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def only(name: str) -> str:
    found = [args for word, args in instructions() if word == name]
    assert len(found) == 1, f"expected one {name}, found {found}"
    return found[0]


def dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def ignored(path: str) -> bool:
    return any(
        fnmatch.fnmatch(path, pattern.rstrip("/")) or path.startswith(pattern.rstrip("/") + "/")
        or fnmatch.fnmatch(Path(path).name, pattern)
        for pattern in dockerignore()
    )  # fmt: skip


def locked() -> dict[str, str]:
    """``{canonical name: version}`` pinned in requirements.lock."""
    text = (ROOT / "requirements.lock").read_text()
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", text, re.MULTILINE)
    return {canonicalize_name(name): version for name, version in pins}


def declared() -> list[Requirement]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return [Requirement(spec) for spec in meta["project"]["dependencies"]]


def position(predicate) -> int:
    """Index of the first Dockerfile instruction ``predicate(word, args)`` accepts."""
    for i, (word, args) in enumerate(instructions()):
        if predicate(word, args):
            return i
    raise AssertionError("no such instruction in the Dockerfile")


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


# -- Dockerfile ------------------------------------------------------------------------------
def test_base_image_is_a_slim_python_of_a_supported_version():
    image = only("FROM")
    match = re.fullmatch(r"python:3\.(\d+)(\.\d+)?-slim(-\w+)?(@sha256:[0-9a-f]{64})?", image)
    assert match and int(match.group(1)) >= 11


def test_entry_point_is_python_dash_m_bot():
    assert json.loads(only("ENTRYPOINT")) == ["python", "-m", "bot"]


def test_runs_as_a_non_root_user_created_in_the_image():
    user = only("USER")
    assert user not in {"root", "0", "0:0"}
    runs = " ".join(args for word, args in instructions() if word == "RUN")
    assert "useradd" in runs and user in runs


def test_healthcheck_requests_healthz():
    check = only("HEALTHCHECK")
    assert "/healthz" in check
    assert "--interval" in check and "--timeout" in check


def test_dependencies_come_from_the_project_metadata():
    runs = " ".join(args for word, args in instructions() if word == "RUN")
    assert re.search(r"pip install (--\S+ )*\.(\s|$)", runs)
    copied = " ".join(args for word, args in instructions() if word == "COPY")
    assert "pyproject.toml" in copied


def test_dependencies_install_from_the_hashed_lock_before_the_code_is_copied():
    lock_install = position(lambda word, args: word == "RUN" and "-r requirements.lock" in args)
    assert "--require-hashes" in instructions()[lock_install][1]
    lock_copy = position(lambda word, args: word == "COPY" and "requirements.lock" in args)
    first_code = position(
        lambda word, args: word == "COPY" and "requirements.lock" not in args.split()[0]
    )
    assert lock_copy < lock_install < first_code


def test_the_project_itself_installs_without_dependencies_after_the_code():
    install = position(
        lambda word, args: word == "RUN" and re.search(r"pip install .*\.(\s|$)", args)
    )
    assert "--no-deps" in instructions()[install][1]
    last_copy = max(i for i, (word, _) in enumerate(instructions()) if word == "COPY")
    assert install > last_copy


def test_every_pyproject_dependency_is_pinned_in_the_lock_within_its_range():
    pins = locked()
    for requirement in declared():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in requirements.lock: refresh it"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"requirements.lock pins {name}=={pins[name]}, outside {requirement}: refresh it"
        )


def test_every_locked_package_carries_a_hash():
    blocks = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / "requirements.lock").read_text())
    pinned = [block for block in blocks if "==" in block.split("\n", 1)[0]]
    assert pinned
    for block in pinned:
        assert "--hash=sha256:" in block, block.split("\n", 1)[0]


def test_every_project_package_is_copied_into_the_image():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = [p.rstrip("*") for p in meta["tool"]["setuptools"]["packages"]["find"]["include"]]
    copies = [args.split()[0] for word, args in instructions() if word == "COPY"]
    for package in packages:
        assert package in copies, f"{package}/ is not copied"


def test_no_secret_is_baked_into_the_image():
    for word, args in instructions():
        if word in {"ENV", "ARG"}:
            assert not re.search(r"TOKEN|SECRET|PASSWORD", args), args


def test_configuration_is_by_environment_with_a_persistent_data_volume():
    env = " ".join(args for word, args in instructions() if word == "ENV")
    assert "STORE_URL=sqlite:////data/" in env
    assert "/data" in only("VOLUME")


# -- packaging -------------------------------------------------------------------------------
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_build_backend_understands_the_spdx_license_expression():
    meta = pyproject()
    assert isinstance(meta["project"]["license"], str)  # PEP 639: setuptools >= 77
    setuptools = next(
        Requirement(r) for r in meta["build-system"]["requires"] if r.startswith("setuptools")
    )
    assert not setuptools.specifier.contains("76.1.0")
    assert setuptools.specifier.contains("77.0.3")


def test_license_file_is_the_mit_licence_of_the_project():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 the ftcost authors" in text
    assert "LICENSE" in pyproject()["project"]["license-files"]


def test_every_package_ships_py_typed():
    meta = pyproject()
    data = meta["tool"]["setuptools"]["package-data"]
    for package in (
        p.rstrip("*") for p in meta["tool"]["setuptools"]["packages"]["find"]["include"]
    ):
        assert (ROOT / package / "py.typed").is_file(), package
        assert "py.typed" in data.get(package, []), package


def test_lint_and_type_tools_live_in_the_dev_extra_not_in_test():
    extras = pyproject()["project"]["optional-dependencies"]
    dev = {canonicalize_name(Requirement(r).name) for r in extras["dev"]}
    test = {canonicalize_name(Requirement(r).name) for r in extras["test"]}
    assert {"ruff", "mypy"} <= dev
    assert not {"ruff", "mypy"} & test


def test_ci_installs_the_dev_extra_and_type_checks_before_the_tests():
    script = (ROOT / ".ci" / "run").read_text()
    assert "'.[test,dev]'" in script
    lines = [ln.strip() for ln in script.splitlines()]
    mypy = lines.index('"$venv/bin/mypy"')
    tests = lines.index('"$venv/bin/python" -m pytest')
    assert mypy < tests
    assert pyproject()["tool"]["mypy"]["files"] == ["engine", "adapters", "catalog", "bot"]


# -- .dockerignore ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [".env", "prod.env", ".env.local", "ftcost-bot.sqlite3", "state/ftcost.sqlite3",
     "ftcost.yml", ".git", ".venv", "tests", "bot/__pycache__/x.pyc"],
)  # fmt: skip
def test_dockerignore_keeps_secrets_local_state_and_dev_files_out(path):
    assert ignored(path)


@pytest.mark.parametrize(
    "path",
    ["pyproject.toml", "README.md", "LICENSE", "requirements.lock", "bot/__main__.py",
     "bot/py.typed", "catalog/models.yaml"],
)  # fmt: skip
def test_dockerignore_keeps_what_the_build_copies(path):
    assert not ignored(path)


# -- docker-compose.yml -----------------------------------------------------------------------
def test_compose_runs_the_bot_on_redis():
    services = compose()["services"]
    assert set(services) >= {"bot", "redis"}
    bot = services["bot"]
    assert bot["build"] == "."
    assert bot["environment"]["STORE_URL"].startswith("redis://redis:")
    assert "redis" in bot["depends_on"]
    assert "healthcheck" in services["redis"]


def test_compose_takes_secrets_from_an_env_file_not_inline():
    bot = compose()["services"]["bot"]
    assert bot["env_file"]
    for name in bot["environment"]:
        assert not re.search(r"TOKEN|SECRET", name)


def test_compose_gives_shutdown_more_time_than_the_bot_takes():
    bot = compose()["services"]["bot"]
    grace_s = int(str(bot["stop_grace_period"]).rstrip("s"))
    config = load_config(ROOT / "ftcost.example.yml", {})
    assert grace_s > config.shutdown_timeout_s


def test_example_configuration_is_valid_and_mounted_by_compose():
    config = load_config(ROOT / "ftcost.example.yml", {})
    assert config.rate_limit_per_minute == 20
    bot = compose()["services"]["bot"]
    mounted = {v.split(":")[1]: v.split(":")[0] for v in bot["volumes"]}
    assert bot["environment"]["FTCOST_CONFIG"] in mounted


# -- backup of the SQLite store ---------------------------------------------------------------
async def test_backup_copies_the_sqlite_store_with_its_threads(tmp_path, monkeypatch):
    from bot.__main__ import main
    from bot.store import ThreadKey
    from bot.store_sqlite import SQLiteStore
    from engine import Request

    db = tmp_path / "state.sqlite3"
    async with SQLiteStore(db) as store:
        await store.save_thread(ThreadKey("slack", "C1", "1.2"), Request(model="llama-3.1-8b"))
    monkeypatch.setenv("FTCOST_STORE", str(db))
    monkeypatch.delenv("STORE_URL", raising=False)
    dest = tmp_path / "copy.sqlite3"
    assert main(["backup", str(dest)]) == 0
    async with SQLiteStore(dest) as copy:
        ctx = await copy.get_thread(ThreadKey("slack", "C1", "1.2"))
    assert ctx is not None and ctx.request.model == "llama-3.1-8b"


def test_backup_refuses_to_overwrite_and_explains(tmp_path, monkeypatch, capsys):
    from bot.__main__ import main

    db = tmp_path / "state.sqlite3"
    db.write_bytes(b"")
    monkeypatch.setenv("FTCOST_STORE", str(db))
    monkeypatch.delenv("STORE_URL", raising=False)
    assert main(["backup", str(db)]) == 2
    assert "exists" in capsys.readouterr().err


def test_backup_of_a_redis_store_points_to_redis_snapshots_without_the_password(
    monkeypatch, capsys
):
    from bot.__main__ import main

    monkeypatch.setenv("STORE_URL", "redis://:hunter2@127.0.0.1:6379/0")
    assert main(["backup", "/tmp/never-written.sqlite3"]) == 2
    err = capsys.readouterr().err
    assert "RDB/AOF" in err and "hunter2" not in err
