"""Every sample of terminal output in README.md and docs/ is what ``ftcost`` prints now.

A sample is a fenced block whose first line is a shell prompt running ``ftcost``::

    ```console
    $ ftcost 70b qlora 50M tokens h100
    Llama 3.1 70B · QLoRA
    ...
    ```

The test runs :func:`adapters.cli.main` on the words after ``$ ftcost`` (``COLUMNS=80``
unless the line sets another width, e.g. ``$ COLUMNS=120 ftcost ...``; the repository root
as the working directory) and compares its output with the rest of the block, line by
line. A block whose last line is ``...`` shows the output's first lines only: those are
compared. A failure shows a diff; ``python -m tests.test_docs_samples`` rewrites every
sample from what the tool prints (then read the diff before committing it).

A few samples cannot be reproduced by the terminal (a Slack reply priced from a refreshed
snapshot, say). Those carry the marker ``<!-- sample: illustrative -->`` on the line before
the fence. A block that looks like ftcost's output but is neither a checked sample nor
marked fails the test, so no unchecked sample slips in.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from difflib import unified_diff
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_COLUMNS = "80"
ILLUSTRATIVE = "<!-- sample: illustrative -->"
MAX_ILLUSTRATIVE = 6
"""Illustrative samples are the exception: past this many, check them instead."""
PROMPT = re.compile(r"^\$ (?P<env>(?:[A-Z_]+=\S+ )*)ftcost(?: (?P<args>.*))?$")
FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<info>[\w+-]*)\s*$")
ELLIPSIS = "..."
"""The last line of a sample that shows only the output's first lines."""
OUTPUT_LOOK = re.compile(
    r"GB per GPU x \d|^Memory per GPU|^Cards$|^What if$|^Assumptions$|GPU-hours ·|"
    r"^\s*prices: \S+ \$[\d.]+/hr",
    re.MULTILINE,
)
"""Lines only ftcost's report prints: a block holding one is output, not a command."""


def doc_files() -> list[Path]:
    """README.md, ARCHITECTURE.md, CHANGELOG.md and every page under docs/."""
    files = [ROOT / name for name in ("README.md", "ARCHITECTURE.md", "CHANGELOG.md")]
    return [f for f in files if f.exists()] + sorted((ROOT / "docs").rglob("*.md"))


@dataclass(frozen=True)
class Block:
    path: Path
    first_line: int
    """1-based line number of the block's first content line."""
    lines: tuple[str, ...]
    illustrative: bool

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.first_line}"

    @property
    def prompt(self) -> re.Match[str] | None:
        return PROMPT.match(self.lines[0]) if self.lines else None

    @property
    def head_only(self) -> bool:
        """The sample shows the output's first lines, then ``...``."""
        return len(self.lines) > 1 and self.lines[-1].strip() == ELLIPSIS

    @property
    def shown(self) -> list[str]:
        """The output lines the sample shows."""
        return trimmed(self.lines[1:-1] if self.head_only else self.lines[1:])

    def expected(self, printed: list[str]) -> list[str]:
        """What of ``printed`` the sample must show: all of it, or its first lines."""
        out = trimmed(printed)
        return out[: len(self.shown)] if self.head_only else out


def blocks(path: Path) -> Iterator[Block]:
    """The fenced blocks of a Markdown file."""
    text = path.read_text("utf-8").splitlines()
    i = 0
    while i < len(text):
        opened = FENCE.match(text[i])
        if not opened:
            i += 1
            continue
        fence = opened["fence"]
        before = next((text[j].strip() for j in range(i - 1, -1, -1) if text[j].strip()), "")
        j = i + 1
        while j < len(text) and not text[j].startswith(fence):
            j += 1
        yield Block(path, i + 2, tuple(text[i + 1 : j]), before == ILLUSTRATIVE)
        i = j + 1


def all_blocks() -> list[Block]:
    return [b for f in doc_files() for b in blocks(f)]


def samples() -> list[Block]:
    return [b for b in all_blocks() if b.prompt and not b.illustrative]


def command(block: Block) -> tuple[dict[str, str], list[str]]:
    """The environment and the arguments of a sample's ``$ ftcost ...`` line."""
    match = block.prompt
    assert match is not None
    env = dict(part.split("=", 1) for part in match["env"].split())
    return env, shlex.split(match["args"] or "")


def run(block: Block) -> tuple[int, list[str]]:
    """Run the sample's command as the terminal would print it: exit status, lines."""
    from adapters.cli import main

    env, args = command(block)
    saved = {name: os.environ.get(name) for name in (*env, "COLUMNS", "FTCOST_FRAMEWORK")}
    cwd = Path.cwd()
    try:
        os.environ.pop("FTCOST_FRAMEWORK", None)
        os.environ["COLUMNS"] = DEFAULT_COLUMNS
        os.environ.update(env)
        os.chdir(ROOT)
        out = io.StringIO()
        status = main(args, out=out, err=io.StringIO())
    finally:
        os.chdir(cwd)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return status, out.getvalue().rstrip("\n").split("\n")


def trimmed(lines: list[str] | tuple[str, ...]) -> list[str]:
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


# ------------------------------------------------------------------------------------------


def test_the_docs_hold_samples_of_the_tool_s_output():
    found = [b.where for b in samples()]
    assert any(w.startswith("README.md:") for w in found), "README has no checked sample"
    assert len(found) >= 3


@pytest.mark.parametrize("block", samples(), ids=lambda b: b.where)
def test_sample_is_what_ftcost_prints_now(block: Block):
    status, printed = run(block)
    assert status == 0, f"{block.where}: `{block.lines[0]}` exits {status}"
    if block.expected(printed) != block.shown:
        diff = "\n".join(
            unified_diff(
                block.shown, block.expected(printed), "the sample", "ftcost now", lineterm=""
            )
        )
        pytest.fail(
            f"{block.where}: the sample differs from what ftcost prints now "
            f"(python -m tests.test_docs_samples rewrites it):\n{diff}"
        )


def test_illustrative_samples_are_few():
    marked = [b.where for b in all_blocks() if b.illustrative]
    assert len(marked) <= MAX_ILLUSTRATIVE, marked


@pytest.mark.parametrize(
    "block", [b for b in all_blocks() if b.illustrative and b.prompt], ids=lambda b: b.where
)
def test_illustrative_sample_command_still_runs(block: Block):
    status, _ = run(block)
    assert status == 0, f"{block.where}: `{block.lines[0]}` exits {status}"


def test_every_block_that_looks_like_output_is_checked_or_marked():
    unchecked = [
        b.where
        for b in all_blocks()
        if not b.prompt and not b.illustrative and OUTPUT_LOOK.search("\n".join(b.lines))
    ]
    assert not unchecked, (
        f"output samples neither checked nor marked: {unchecked}. Start the block with "
        f"`$ ftcost ARGS`, or put {ILLUSTRATIVE} on the line before it."
    )


# -- the one configuration reference (docs/deploy.md) ---------------------------------------

DEPLOY = ROOT / "docs" / "deploy.md"
CONFIG_BLOCK_MARK = "# bot.yml: every key, with its default"
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]{2,}$")
PRODUCTION = ("engine", "catalog", "adapters", "bot")


def environment_variables() -> set[str]:
    """Every environment variable the product reads, found in its source: string literals
    given to ``os.environ.get``/``os.environ[...]``/``os.getenv``/``env.get``, and the
    names held by module constants called ``*_ENV``, ``*_ENVS`` or ``_ENV_OVERRIDES``."""
    import ast

    names: set[str] = set()

    def literals(node: ast.AST) -> list[str]:
        return [
            n.value for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and ENV_NAME.match(n.value)
        ]

    for folder in PRODUCTION:
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Call) and node.args:
                    func = ast.unparse(node.func)
                    if func.endswith(("environ.get", "getenv")) or func == "env.get":
                        names.update(literals(node.args[0]))
                elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith(
                    "environ"
                ):
                    names.update(literals(node.slice))
                elif isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    named = [t.id for t in targets if isinstance(t, ast.Name)]
                    if node.value is not None and any(
                        re.search(r"_ENVS?$|^_ENV_OVERRIDES$", n) for n in named
                    ):
                        value = node.value
                        keys = value.keys if isinstance(value, ast.Dict) else [value]
                        for key in keys:
                            if key is not None:
                                names.update(literals(key))
    return names


def env_rows(path: Path) -> list[str]:
    """The variables a page's tables describe: rows whose first cell is a `NAME`."""
    return re.findall(r"^\| `([A-Z][A-Z0-9_]{2,})` \|", path.read_text("utf-8"), re.MULTILINE)


def config_keys(model: type, prefix: str = "") -> set[str]:
    """Every key of the bot's YAML file, dotted (``slack.command``)."""
    from pydantic import BaseModel

    keys = set()
    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        if field.exclude:
            continue
        keys.add(prefix + name)
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            keys |= config_keys(kind, f"{prefix}{name}.")
    return keys


def yaml_keys(data: dict[str, object], prefix: str = "") -> set[str]:
    keys = set()
    for name, value in data.items():
        keys.add(prefix + name)
        if isinstance(value, dict) and name not in {"cloud_urls"}:
            keys |= yaml_keys(value, f"{prefix}{name}.")
    return keys


def test_the_environment_scan_finds_the_variables_the_product_reads():
    found = environment_variables()
    assert {"SLACK_BOT_TOKEN", "STORE_URL", "HF_TOKEN", "COLUMNS", "FTCOST_CONFIG"} <= found


def test_every_environment_variable_is_described_once_in_deploy_md():
    rows = env_rows(DEPLOY)
    twice = sorted({name for name in rows if rows.count(name) > 1})
    missing = sorted(environment_variables() - set(rows))
    assert not missing, f"docs/deploy.md's variable table lacks {missing}"
    assert not twice, f"docs/deploy.md describes {twice} more than once"


def test_no_other_page_keeps_its_own_table_of_environment_variables():
    variables = environment_variables()
    elsewhere = {
        p.relative_to(ROOT).as_posix(): sorted(set(env_rows(p)) & variables)
        for p in doc_files() if p != DEPLOY and set(env_rows(p)) & variables
    }
    assert not elsewhere, f"variables described outside docs/deploy.md: {elsewhere}"


def test_the_configuration_reference_names_every_key_once():
    import yaml

    from bot.config import Config

    text = DEPLOY.read_text("utf-8")
    block = text.split(CONFIG_BLOCK_MARK + "\n", 1)[1].split("```", 1)[0]
    data = yaml.safe_load(block)
    assert yaml_keys(data) == config_keys(Config)
    assert text.count(CONFIG_BLOCK_MARK) == 1


# ------------------------------------------------------------------------------------------


def update() -> int:
    """Rewrite every checked sample with what ftcost prints now; the number rewritten."""
    changed = 0
    for path in doc_files():
        text = path.read_text("utf-8").split("\n")
        for block in reversed([b for b in blocks(path) if b.prompt and not b.illustrative]):
            status, printed = run(block)
            if status != 0:
                print(f"{block.where}: exits {status}; left as it is", file=sys.stderr)
                continue
            start = block.first_line  # 0-based index of the line after the prompt
            end = block.first_line - 1 + len(block.lines) - (1 if block.head_only else 0)
            new = block.expected(printed)
            if block.head_only:
                new = new[: len(block.shown)]
            if text[start:end] != new:
                text[start:end] = new
                changed += 1
        if "\n".join(text) != path.read_text("utf-8"):
            path.write_text("\n".join(text), "utf-8")
    return changed


if __name__ == "__main__":
    print(f"{update()} sample(s) rewritten")
