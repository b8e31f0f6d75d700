"""HTTP to the Hugging Face Hub (aiohttp): ``{endpoint}/{org}/{name}/resolve/{rev}/{file}``.

The same resolve URLs ``huggingface_hub`` downloads from, with ``Authorization: Bearer
$HF_TOKEN`` when a token is set. Every failure becomes a :class:`HubError` worded for
the user, read the way ``huggingface_hub.utils.hf_raise_for_status`` reads the Hub's
answers: the ``X-Error-Code`` header says ``RepoNotFound`` (sent as 401 to anonymous
callers, so private repositories do not leak), ``GatedRepo``, ``RevisionNotFound`` or
``EntryNotFound``; without it the status code decides. ``X-Repo-Commit`` names the
commit a branch or tag resolved to.

Requests go through the proxy the environment names for the endpoint (``HTTPS_PROXY``,
``HTTP_PROXY`` for an ``http://`` endpoint; none when ``NO_PROXY`` lists its host), as
aiohttp's ``trust_env`` chooses it, but without ``trust_env`` itself: that would also add
``~/.netrc`` credentials for the Hub's host, which aiohttp refuses to combine with the
``Authorization`` header of ``HF_TOKEN``. A proxy that refuses is named in the error.

Each request (and the reading of its body) has ``timeout_s``. Bodies are read up to a
cap, and a ``Range`` read stops after the bytes asked for even if the server ignores
``Range``, so a multi-gigabyte weight file is never downloaded.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Final

import aiohttp

from catalog.hub.errors import HubError, HubErrorKind, shown
from catalog.hub.ref import HubRef
from catalog.proxy import PROXY_ERRORS, env_proxy

CONFIG_FILE: Final = "config.json"
MAX_JSON_BYTES: Final = 4 * 1024 * 1024
"""A config or index larger than this is not a model's config (typical: a few KB)."""
USER_AGENT: Final = "ftcost (+hub resolver; aiohttp)"
_CHUNK: Final = 64 * 1024
COMMIT_PATTERN: Final = re.compile(r"[0-9a-fA-F]{7,64}")
"""What an ``X-Repo-Commit`` header may hold (the Hub sends a 40-hex sha): anything else
(an escape sequence, a markdown link) is not repeated in the report but ignored."""


class _Absent(Exception):
    """The repository and revision exist but the file does not (404 EntryNotFound)."""


class HubClient:
    """Requests for one resolution; the caller owns ``session``."""

    def __init__(
        self, session: aiohttp.ClientSession, endpoint: str, token: str | None, timeout_s: float,
        timeout_setting: str = "the bot's hub.timeout_s setting",
    ) -> None:
        self.session = session
        self.endpoint = endpoint.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.timeout_setting = timeout_setting
        """What sets ``timeout_s``, named when a request times out
        (``HubSettings.timeout_setting``)."""
        self.requests = 0
        """Requests made (for logs)."""

    # -- public ---------------------------------------------------------------------------
    async def config(self, ref: HubRef) -> tuple[Any, str | None]:
        """``config.json`` parsed, and the commit the revision resolved to (if sent)."""
        try:
            body, commit = await self._get(ref, CONFIG_FILE, ref.revision, None, MAX_JSON_BYTES)
        except _Absent:
            raise HubError(
                HubErrorKind.NO_CONFIG,
                f"{ref.repo} has no config.json at revision {ref.revision}: it is not a "
                "transformers model ftcost can size (GGUF-only or adapter-only repositories "
                "have none). Point at the base model's repository instead.",
                ref.id,
            ) from None
        try:
            return json.loads(body.decode("utf-8")), commit
        except UnicodeDecodeError:
            problem = "it is not UTF-8 text"
        except json.JSONDecodeError as exc:
            problem = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        except ValueError:  # json's int() refuses numbers over 4,300 digits
            problem = "a number in it has more than 4,300 digits"
        except RecursionError:
            problem = "it nests arrays or objects thousands of levels deep"
        raise HubError(
            HubErrorKind.MALFORMED,
            f"config.json of {ref.id} is not valid JSON ({problem}). The repository's "
            "config is broken: try another revision (org/name@rev) or the original "
            "repository.",
            ref.id,
        )

    async def optional_json(self, ref: HubRef, filename: str, revision: str) -> Any | None:
        """A JSON file that may be absent (None); invalid JSON raises ``ValueError``."""
        try:
            body, _ = await self._get(ref, filename, revision, None, MAX_JSON_BYTES)
        except _Absent:
            return None
        try:
            return json.loads(body.decode("utf-8"))
        except RecursionError:
            raise ValueError(f"{filename} nests thousands of levels deep") from None

    async def optional_range(
        self, ref: HubRef, filename: str, revision: str, start: int, end: int
    ) -> bytes | None:
        """Bytes ``start..end`` (inclusive) of a file that may be absent (None)."""
        try:
            body, _ = await self._get(ref, filename, revision, (start, end), end - start + 1)
        except _Absent:
            return None
        return body

    # -- the request ----------------------------------------------------------------------
    def _url(self, ref: HubRef, filename: str, revision: str) -> str:
        return self.endpoint + ref.path(filename, revision)

    async def _get(
        self,
        ref: HubRef,
        filename: str,
        revision: str,
        byte_range: tuple[int, int] | None,
        limit: int,
    ) -> tuple[bytes, str | None]:
        headers = {"User-Agent": USER_AGENT}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if byte_range is not None:
            headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
        self.requests += 1
        url = self._url(ref, filename, revision)
        proxy, proxy_auth = env_proxy(url)
        try:
            async with asyncio.timeout(self.timeout_s):
                async with self.session.get(
                    url, headers=headers, proxy=proxy, proxy_auth=proxy_auth
                ) as resp:
                    if resp.status not in (200, 206):
                        self._raise_for(resp, ref, filename, revision)
                    skip = byte_range[0] if byte_range and resp.status == 200 else 0
                    body = await _read(resp, skip + limit)
                    if byte_range is None and len(body) > limit:
                        raise HubError(
                            HubErrorKind.MALFORMED,
                            f"{filename} of {ref.id} is larger than {limit // 1024**2} MB, "
                            "so it is not a model config. Point at a model repository.",
                            ref.id,
                        )
                    return body[skip : skip + limit], _commit(resp)
        except TimeoutError:
            raise HubError(
                HubErrorKind.TIMEOUT,
                f"The Hugging Face Hub did not answer within {self.timeout_s:g} s for "
                f"{ref.id}. Try again in a moment ({self.timeout_setting} raises the "
                "limit).",
                ref.id,
            ) from None
        except PROXY_ERRORS as exc:
            raise HubError(
                HubErrorKind.UNAVAILABLE,
                f"Cannot reach the Hugging Face Hub at {self.endpoint} through the proxy "
                f"({type(exc).__name__}). Check HTTPS_PROXY (or list the Hub's host in "
                "NO_PROXY) and try again.",
                ref.id,
            ) from None
        except aiohttp.ClientError as exc:
            raise HubError(
                HubErrorKind.UNAVAILABLE,
                f"Cannot reach the Hugging Face Hub at {self.endpoint} "
                f"({type(exc).__name__}). Check the network (or HF_ENDPOINT) and try again.",
                ref.id,
            ) from None

    def _raise_for(
        self, resp: aiohttp.ClientResponse, ref: HubRef, filename: str, revision: str
    ) -> None:
        status = resp.status
        code = resp.headers.get("X-Error-Code", "")
        page = f"{self.endpoint}/{ref.repo}"
        has_token = bool(self.token)
        if code == "EntryNotFound" or (status == 404 and not code and filename != CONFIG_FILE):
            raise _Absent(filename)
        if code == "RepoNotFound" or (status == 404 and not code):
            private = (
                "if it is private, the token in HF_TOKEN cannot see it."
                if has_token
                else "if it is private, set HF_TOKEN to a token that can read it."
            )
            raise HubError(
                HubErrorKind.NOT_FOUND,
                f"No model {ref.repo} on the Hugging Face Hub: check the spelling (org/name "
                f"as in its huggingface.co address, e.g. Qwen/Qwen2.5-7B-Instruct); {private}",
                ref.id,
            )
        if code == "RevisionNotFound":
            raise HubError(
                HubErrorKind.REVISION_NOT_FOUND,
                f"{ref.repo} has no revision '{shown(revision)}': name a branch, tag or "
                f"commit that exists ({ref.repo}@main), or leave out @... to use main.",
                ref.id,
            )
        if code == "GatedRepo":
            if has_token:
                text = (
                    f"{ref.repo} is gated and the account of the HF_TOKEN token has no "
                    f"access yet: accept its licence on {page} (some need the authors' "
                    "approval), then ask again."
                )
            else:
                text = (
                    f"{ref.repo} is gated: accept its licence on {page}, then set HF_TOKEN "
                    "(for the bot: in its environment) to a read token of that account."
                )
            raise HubError(HubErrorKind.GATED, text, ref.id)
        if status == 401:
            text = (
                f"The Hub refused the token in HF_TOKEN (401) for {ref.repo}: check that "
                "it is valid and not expired."
                if has_token
                else f"{ref.repo} needs a Hugging Face token: set HF_TOKEN to a read token "
                "that can see it."
            )
            raise HubError(HubErrorKind.AUTH, text, ref.id)
        if status == 403:
            text = (
                f"The Hub denies the token in HF_TOKEN access to {ref.repo} (403): give it "
                "read access to this repository."
                if has_token
                else f"The Hub denies access to {ref.repo} (403): set HF_TOKEN to a token "
                "that can read it."
            )
            raise HubError(HubErrorKind.AUTH, text, ref.id)
        if status == 429:
            raise HubError(
                HubErrorKind.UNAVAILABLE,
                "The Hugging Face Hub is rate-limiting requests (429); try again in a minute.",
                ref.id,
            )
        raise HubError(
            HubErrorKind.UNAVAILABLE,
            f"The Hugging Face Hub answered HTTP {status} for {ref.id}'s {filename}; it may "
            "be down for a moment: try again shortly.",
            ref.id,
        )


async def _read(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of the body (one more than allowed shows overflow)."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await resp.content.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _commit(resp: aiohttp.ClientResponse) -> str | None:
    """``X-Repo-Commit`` of the response, or of a redirect that led to it, when it is a
    commit sha (:data:`COMMIT_PATTERN`); None otherwise."""
    for r in (resp, *reversed(resp.history)):
        commit = r.headers.get("X-Repo-Commit")
        if commit:
            commit = commit.strip()
            return commit if COMMIT_PATTERN.fullmatch(commit) else None
    return None
