"""A local stand-in for the Hugging Face Hub's file-resolve API, on 127.0.0.1.

Point the resolver at it with ``HF_ENDPOINT=hub.base_url`` (or ``HubSettings(endpoint=
hub.base_url)``). It answers ``GET /{org}/{name}/resolve/{revision}/{filename}`` the
way the Hub does, including the headers ``huggingface_hub`` reads:

* ``X-Repo-Commit``: the commit a branch, tag or sha resolved to, on every file;
* ``X-Error-Code``: ``RepoNotFound`` (404), ``RevisionNotFound`` (404),
  ``EntryNotFound`` (404), ``GatedRepo`` (401 without a token, 403 with a token that
  has no access), as the Hub sends them;
* ``Range`` on ``model.safetensors`` answered with 206 and ``Content-Range``.

Repositories are added with :meth:`FakeHub.add` (a config as a dict, or raw text for a
broken one; an index; a safetensors file; gated; slow). Every request is recorded in
``requests`` (path, ``Range``, ``Authorization``) so tests can count what was asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import struct
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.fakes.hub_configs import QWEN2_5_7B_INSTRUCT, REAL_MODELS, RealModel
from tests.fakes.loopback import LoopbackServer

TOKEN = "hf_fake_read_token"
"""The one token the fake accepts for gated repositories."""


def commit_for(repo: str, revision: str = "main") -> str:
    """A stable 40-hex commit sha per repository and branch."""
    return hashlib.sha1(f"{repo}@{revision}".encode()).hexdigest()


def safetensors_bytes(
    tensors: Mapping[str, Sequence[int]], dtype: str = "BF16", metadata_pad: int = 0
) -> bytes:
    """A ``.safetensors`` file's bytes up to the end of its header (no tensor data: the
    resolver only reads the header). Offsets are what the shapes would take;
    ``metadata_pad`` characters of ``__metadata__`` make the header that much longer."""
    width = {"BF16": 2, "F16": 2, "F32": 4}[dtype]
    header: dict[str, Any] = {"__metadata__": {"format": "pt", "pad": "x" * metadata_pad}}
    offset = 0
    for name, shape in tensors.items():
        size = width
        for d in shape:
            size *= d
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset,
                                                                              offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


def index_json(total_size: int, tensor_names: Sequence[str] = ()) -> dict[str, Any]:
    """A ``model.safetensors.index.json`` with ``metadata.total_size`` (bytes)."""
    names = list(tensor_names) or ["model.embed_tokens.weight"]
    return {
        "metadata": {"total_size": total_size},
        "weight_map": {n: "model-00001-of-00002.safetensors" for n in names},
    }


@dataclass
class FakeRepo:
    repo: str
    files: dict[str, bytes]
    revisions: dict[str, str]
    """Revision name (branch, tag or the sha itself) -> commit sha."""
    gated: bool = False
    delay_s: float = 0.0
    """Seconds to wait before answering any file (a slow Hub)."""
    fail_status: int | None = None
    """Answer every request with this status (e.g. 503) instead."""


@dataclass(frozen=True)
class Hit:
    path: str
    range: str | None
    authorization: str | None


@dataclass
class FakeHub(LoopbackServer):
    repos: dict[str, FakeRepo] = field(default_factory=dict)
    requests: list[Hit] = field(default_factory=list)
    _server: TestServer | None = None
    _release: asyncio.Event = field(default_factory=asyncio.Event)

    # -- set-up ---------------------------------------------------------------------------
    def add(
        self,
        repo: str,
        config: Mapping[str, Any] | str | bytes | None,
        *,
        index: Mapping[str, Any] | None = None,
        safetensors: bytes | None = None,
        gated: bool = False,
        delay_s: float = 0.0,
        fail_status: int | None = None,
        branches: Sequence[str] = ("main",),
    ) -> FakeRepo:
        files: dict[str, bytes] = {}
        if config is not None:
            files["config.json"] = (
                config.encode() if isinstance(config, str)
                else config if isinstance(config, bytes)
                else json.dumps(config, indent=2).encode()
            )
        if index is not None:
            files["model.safetensors.index.json"] = json.dumps(index).encode()
        if safetensors is not None:
            files["model.safetensors"] = safetensors
        revisions: dict[str, str] = {}
        for branch in branches:
            sha = commit_for(repo, branch)
            revisions[branch] = sha
            revisions[sha] = sha
        entry = FakeRepo(repo, files, revisions, gated, delay_s, fail_status)
        self.repos[repo.lower()] = entry
        return entry

    def add_real(self, model: RealModel, *, with_index: bool = True, repo: str | None = None
                 ) -> FakeRepo:
        """A real model's config (and its real index total_size when known)."""
        index = (
            index_json(model.index_total_size)
            if with_index and model.index_total_size is not None
            else None
        )
        return self.add(repo or model.repo, model.config, index=index)

    def add_all_real(self) -> FakeHub:
        for model in REAL_MODELS:
            self.add_real(model)
        return self

    def hits(self, repo: str | None = None) -> list[Hit]:
        """Requests made (for one repository when given)."""
        if repo is None:
            return list(self.requests)
        prefix = f"/{repo}/".lower()
        return [h for h in self.requests if h.path.lower().startswith(prefix)]

    # -- serving ----------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        assert self._server is not None
        return str(self._server.make_url("")).rstrip("/")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(
            Hit(request.path, request.headers.get("Range"), request.headers.get("Authorization"))
        )
        org, name = request.match_info["org"], request.match_info["name"]
        revision, filename = request.match_info["revision"], request.match_info["filename"]
        repo = self.repos.get(f"{org}/{name}".lower())
        if repo is None:
            return _error(404, "RepoNotFound", "Repository Not Found")
        if repo.delay_s:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._release.wait(), repo.delay_s)
        if repo.fail_status is not None:
            return web.json_response({"error": "unavailable"}, status=repo.fail_status)
        if repo.gated:
            auth = request.headers.get("Authorization")
            if auth is None:
                return _error(401, "GatedRepo", "Access to model is restricted. You must "
                              "have access to it and be authenticated to access it.")
            if auth != f"Bearer {TOKEN}":
                return _error(403, "GatedRepo", "Access to model is restricted and you are "
                              "not in the authorized list.")
        commit = repo.revisions.get(revision)
        if commit is None:
            return _error(404, "RevisionNotFound", "Invalid rev id")
        body = repo.files.get(filename)
        if body is None:
            return _error(404, "EntryNotFound", "Entry not found", commit)
        headers = {"X-Repo-Commit": commit, "Accept-Ranges": "bytes"}
        span = _range(request.headers.get("Range"), len(body))
        if span is None:
            return web.Response(body=body, headers=headers,
                                content_type="application/octet-stream")
        start, end = span
        headers["Content-Range"] = f"bytes {start}-{end}/{len(body)}"
        return web.Response(status=206, body=body[start : end + 1], headers=headers,
                            content_type="application/octet-stream")

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/{org}/{name}/resolve/{revision}/{filename:.+}", self._handle)]


_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


def _range(header: str | None, size: int) -> tuple[int, int] | None:
    if header is None:
        return None
    match = _RANGE.match(header.strip())
    if match is None:
        return None
    start = int(match.group(1))
    end = int(match.group(2)) if match.group(2) else size - 1
    return start, min(end, size - 1)


def _error(status: int, code: str, message: str, commit: str | None = None) -> web.Response:
    headers = {"X-Error-Code": code, "X-Error-Message": message}
    if commit:
        headers["X-Repo-Commit"] = commit
    return web.json_response({"error": message}, status=status, headers=headers)


@contextlib.contextmanager
def hub_in_thread() -> Iterator[FakeHub]:
    """A :class:`FakeHub` served from its own event loop on a background thread, for
    code that runs ``asyncio.run`` itself (the terminal front end)."""
    loop = asyncio.new_event_loop()
    hub = FakeHub()
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(hub.start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, name="fake-hub", daemon=True)
    thread.start()
    assert ready.wait(10), "the fake Hub did not start"
    try:
        yield hub
    finally:
        asyncio.run_coroutine_threadsafe(hub.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


SUPPORT_REPO = "acme/qwen2.5-7b-support-ft"
"""A fine-tune no catalog lists, whose config is Qwen2.5-7B-Instruct's (with its index)."""


@contextlib.asynccontextmanager
async def support_model_hub() -> AsyncIterator[FakeHub]:
    """A started FakeHub serving :data:`SUPPORT_REPO`."""
    async with FakeHub() as fake:
        fake.add(SUPPORT_REPO, QWEN2_5_7B_INSTRUCT.config,
                 index=index_json(QWEN2_5_7B_INSTRUCT.index_total_size or 0))  # fmt: skip
        yield fake
