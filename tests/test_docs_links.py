"""No dead relative links: every link in a Markdown file, and every path the Slack app
manifest names, resolves to a file or folder of the repository; a link's ``#anchor``
names a heading of the page it points at (GitHub's heading ids)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = frozenset({"node_modules", "build", "dist"})
MANIFEST = ROOT / "adapters" / "slack" / "manifest.yml"

INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\((?P<target><[^>]*>|[^()\s]*)(?:\s+\"[^\"]*\")?\)"
)
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+(?P<target>\S+)", re.MULTILINE)
HTML_LINK = re.compile(r"<(?:a|img)\s[^>]*(?:href|src)=\"(?P<target>[^\"]+)\"", re.IGNORECASE)
FENCED = re.compile(r"^(```+|~~~+).*?^\1\s*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)
"""``https:``, ``mailto:``, ``slack:`` and protocol-relative links are not checked here."""
MANIFEST_PATH = re.compile(r"(?<![\w/.-])(?P<path>(?:[\w.-]+/)+[\w.-]+\.(?:md|ya?ml|py|png))")


def markdown_files() -> list[Path]:
    """Every Markdown file of the repository, outside hidden, virtual-env and build folders."""
    out = []
    for path in ROOT.rglob("*.md"):
        parts = path.relative_to(ROOT).parts[:-1]
        if any(p.startswith(".") or p in SKIPPED_DIRS or p.endswith(".egg-info") for p in parts):
            continue
        out.append(path)
    return sorted(out)


def prose(text: str) -> str:
    """``text`` without fenced blocks and code spans (links there are code, not links);
    a code span becomes ``code`` so a link whose text is code still reads as a link."""
    text = FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return INLINE_CODE.sub("code", text)


def links(path: Path) -> list[tuple[int, str]]:
    """``(line, target)`` of every link and image in a Markdown file."""
    text = prose(path.read_text("utf-8"))
    found = []
    for pattern in (INLINE_LINK, REFERENCE_LINK, HTML_LINK):
        for match in pattern.finditer(text):
            target = match["target"].strip("<>")
            found.append((text.count("\n", 0, match.start()) + 1, target))
    return found


def slug(heading: str) -> str:
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The heading ids of a Markdown page (repeated headings get ``-1``, ``-2``, ...)."""
    seen: dict[str, int] = {}
    out = set()
    text = FENCED.sub("", path.read_text("utf-8"))
    for line in text.splitlines():
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match[1])
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    out.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", path.read_text("utf-8")))
    return out


def problem(source: Path, target: str) -> str | None:
    """Why ``target`` (a link in ``source``) is dead, or None when it resolves."""
    if not target or EXTERNAL.match(target):
        return None
    file_part, _, anchor = target.partition("#")
    resolved = (source.parent / unquote(file_part)).resolve() if file_part else source
    if not resolved.exists():
        return f"{file_part} does not exist"
    try:
        resolved.relative_to(ROOT)
    except ValueError:
        return f"{file_part} is outside the repository"
    if anchor and resolved.suffix == ".md" and anchor.lower() not in anchors(resolved):
        return f"{resolved.relative_to(ROOT)} has no heading #{anchor}"
    return None


def test_the_link_checker_sees_the_docs():
    files = {p.relative_to(ROOT).as_posix() for p in markdown_files()}
    assert {"README.md", "docs/slack.md", "docs/deploy.md"} <= files
    assert len(links(ROOT / "README.md")) >= 10


def test_the_link_checker_reads_github_heading_ids():
    assert slug("Socket Mode or HTTP mode") == "socket-mode-or-http-mode"
    assert slug("`--json`: the contract") == "--json-the-contract"
    assert slug("Budgets, deadlines & limits") == "budgets-deadlines--limits"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(path: Path):
    dead = [
        f"line {line}: ({target}) {why}"
        for line, target in links(path)
        if (why := problem(path, target)) is not None
    ]
    assert not dead, f"{path.relative_to(ROOT)}: dead links:\n  " + "\n  ".join(dead)


def test_every_path_the_slack_manifest_names_exists():
    named = MANIFEST_PATH.findall(MANIFEST.read_text("utf-8"))
    assert named, "the manifest names no guide"
    missing = [p for p in named if not (ROOT / p).exists()]
    assert not missing, f"adapters/slack/manifest.yml names missing files: {missing}"
