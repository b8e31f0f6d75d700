"""Hub model references: ``org/name`` or ``org/name@revision`` (and the Hub's URLs).

:func:`hub_ref_for_word` decides whether a word the query parser did not know names a
Hub model. The rule is deliberately narrow (``org/name`` made of the characters the Hub
allows in repository ids, the organisation containing a letter), so a typo such as
``2.50/hr`` never turns into a Hub lookup. No I/O here, and no aiohttp import: the
terminal front end imports this module on every run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote

from catalog.hub.errors import HubError, HubErrorKind
from engine.specs import Catalog

DEFAULT_REVISION: Final = "main"
_URL_PREFIX: Final = re.compile(r"^(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/", re.I)
_PART: Final = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_REPO: Final = re.compile(rf"^(?P<org>{_PART})/(?P<name>{_PART})$")
_REVISION: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
_MAX_REPO_CHARS: Final = 96
"""The Hub's limit on a repository id (``huggingface_hub.utils.validate_repo_id``)."""
_EXAMPLE: Final = "Qwen/Qwen2.5-7B-Instruct@main"


@dataclass(frozen=True, slots=True)
class HubRef:
    """A model on the Hub: its repository and the revision asked for."""

    repo: str
    """``org/name``."""
    revision: str = DEFAULT_REVISION
    explicit_revision: bool = False
    """True when the text named the revision (``@v1.0``): it is then part of the id."""

    @property
    def id(self) -> str:
        """The model id used in requests and thread contexts: ``org/name`` or, with an
        explicit revision, ``org/name@revision``."""
        return f"{self.repo}@{self.revision}" if self.explicit_revision else self.repo

    def path(self, filename: str, revision: str | None = None) -> str:
        """``/{org}/{name}/resolve/{revision}/{filename}`` (the revision URL-quoted, as
        ``huggingface_hub`` does, so ``refs/pr/1`` works)."""
        rev = quote(revision or self.revision, safe="")
        return f"/{self.repo}/resolve/{rev}/{filename}"

    @classmethod
    def parse(cls, text: str) -> HubRef:
        """Read ``org/name``, ``org/name@rev`` or a ``huggingface.co/org/name`` URL.

        Raises :class:`HubError` (``BAD_REF``) with a message saying what is malformed.
        """
        raw = text.strip()
        body = _URL_PREFIX.sub("", raw).rstrip("/")
        repo, at, revision = body.partition("@")
        if not _valid_repo(repo):
            raise HubError(
                HubErrorKind.BAD_REF,
                f'"{_show(raw)}" is not a Hugging Face model id: write it as org/name '
                f"(letters, digits, '-', '_', '.'), e.g. {_EXAMPLE}.",
                raw,
            )
        if not at:
            return cls(repo)
        if not _REVISION.match(revision) or ".." in revision or revision.endswith("/"):
            raise HubError(
                HubErrorKind.BAD_REF,
                f'"{_show(raw)}": after "@" comes a branch, tag or commit of {repo} '
                f"(e.g. {repo}@main or {repo}@<40-hex commit>); "
                + (f'"{_show(revision)}" is not one.' if revision else "nothing follows it."),
                raw,
            )
        return cls(repo, revision, explicit_revision=True)


def _valid_repo(repo: str) -> bool:
    match = _REPO.match(repo)
    return bool(
        match
        and len(repo) <= _MAX_REPO_CHARS
        and "--" not in repo
        and ".." not in repo
        and re.search(r"[A-Za-z]", match["org"])
    )


def _show(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_SHORTHANDS: Final = frozenset({"w/o", "w/out", "n/a", "i/o", "a/b"})
"""Written shorthands of ``org/name`` shape that no question means as a model."""


def looks_like_hub_id(word: str | None) -> bool:
    """Whether ``word`` has the shape of ``org/name[@...]`` (or a Hub URL to one), and
    is not a written shorthand such as ``w/o``."""
    if not word or word.strip().lower() in _SHORTHANDS:
        return False
    body = _URL_PREFIX.sub("", word.strip()).rstrip("/")
    return _valid_repo(body.partition("@")[0])


def hub_ref_for_word(word: str | None, catalog: Catalog) -> HubRef | None:
    """The Hub model ``word`` names, when it names one the catalog does not have.

    None for words that are not ``org/name`` shaped and for catalog models (their
    aliases include many ``org/name`` ids). Raises :class:`HubError` for an
    ``org/name@...`` whose revision part is malformed.
    """
    if word is None or not looks_like_hub_id(word):
        return None
    ref = HubRef.parse(word)
    if catalog.find_model(ref.id) is not None or ref.id in catalog.models:
        return None
    return ref


def needs_hub(model_id: str | None, catalog: Catalog) -> HubRef | None:
    """For a stored request's model id (a thread's context, a clicked estimate): the Hub
    reference to resolve when the catalog does not hold it, else None."""
    if not model_id or model_id in catalog.models:
        return None
    try:
        return hub_ref_for_word(model_id, catalog)
    except HubError:
        return None
