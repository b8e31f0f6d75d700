"""Resolve ``org/name[@rev]`` to a :class:`~engine.specs.ModelSpec`, with a cache.

One resolution: ``config.json`` (fatal if it fails), mapped by
:mod:`catalog.hub.families`; then the checkpoint cross-check (never fatal): the
``model.safetensors.index.json`` of that commit, else the header of a single
``model.safetensors``, compared with the architecture's count by the report (a warning
above :data:`CROSSCHECK_TOLERANCE`).

The cache is anything with ``async cache_get(key) -> str | None`` and ``async
cache_put(key, value, ttl_s)`` (the bot's state store; :class:`MemoryCache` otherwise).
A resolved model is kept ``cache_ttl_days`` as JSON; "no such model", "family not
supported" and broken configs ``negative_ttl_minutes``; timeouts, outages and token
problems never. A cache that raises one of ``cache_errors`` (the store's
``StoreUnavailable``) is skipped for that call: the Hub is asked directly. Concurrent
resolutions of one model share one set of requests. An entry read back is held to the
bounds a fresh answer meets (:func:`cached_problem`): one that breaks them, or cannot be
decoded, is a miss (the Hub is asked again, one warning logged).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any, Final, Protocol

import aiohttp
from pydantic import ValidationError

from catalog.echo import one_line
from catalog.hub.bounds import MAX_PARAMS, architecture_problem
from catalog.hub.checkpoint import (
    HEADER_PREFIX_BYTES,
    CheckpointFormatError,
    Count,
    count_from_header,
    count_from_index,
    header_length,
)
from catalog.hub.client import HubClient
from catalog.hub.errors import HubError, HubErrorKind
from catalog.hub.families import FAMILIES, Mapped, map_config
from catalog.hub.ref import HubRef
from catalog.hub.settings import HubSettings
from engine.specs import HubOrigin, ModelSpec

log = logging.getLogger("ftcost.hub")

CACHE_VERSION: Final = "v1"
"""Part of every cache key: bump it when the mapping changes what a config means."""
INDEX_FILE: Final = "model.safetensors.index.json"
SINGLE_FILE: Final = "model.safetensors"
FIRST_READ_BYTES: Final = 64 * 1024
"""The first Range read of a ``model.safetensors``: the length and, usually, the header."""


class HubCache(Protocol):
    async def cache_get(self, key: str) -> str | None: ...

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None: ...


class MemoryCache:
    """An in-process :class:`HubCache` with expiry (``clock`` in seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._items: dict[str, tuple[str, float]] = {}

    async def cache_get(self, key: str) -> str | None:
        item = self._items.get(key)
        if item is None:
            return None
        if item[1] <= self.clock():
            del self._items[key]
            return None
        return item[0]

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        self._items[key] = (value, self.clock() + ttl_s)


class HubResolver:
    """Turns Hub references into model specs. ``endpoint`` and ``token`` override
    ``HF_ENDPOINT`` / ``HF_TOKEN`` (read at each resolution when not given)."""

    def __init__(
        self,
        settings: HubSettings | None = None,
        cache: HubCache | None = None,
        *,
        cache_errors: tuple[type[BaseException], ...] = (),
        endpoint: str | None = None,
        token: str | None = None,
    ) -> None:
        self.settings = settings or HubSettings()
        self.cache = cache
        self.cache_errors = cache_errors
        self._endpoint = endpoint.rstrip("/") if endpoint else None
        self._token = token
        self._inflight: dict[str, asyncio.Future[ModelSpec]] = {}

    @property
    def endpoint(self) -> str:
        return self._endpoint or self.settings.resolved_endpoint()

    @property
    def token(self) -> str | None:
        return self._token if self._token is not None else self.settings.token()

    def cache_key(self, ref: HubRef) -> str:
        return f"ftcost:hub:{CACHE_VERSION}:{self.endpoint}:{ref.id.lower()}"

    # -- resolving ------------------------------------------------------------------------
    async def resolve(self, ref: HubRef | str) -> ModelSpec:
        """The model ``ref`` names; :class:`HubError` with a user-facing message if not."""
        if isinstance(ref, str):
            ref = HubRef.parse(ref)
        key = self.cache_key(ref)
        cached = await self._cache_get(key)
        if cached is not None:
            hit = _decode(cached, ref)
            if hit is not None:
                log.debug("hub cache hit %s", ref.id)
                return hit
        future = self._inflight.get(key)
        if future is None or future.done():
            future = asyncio.ensure_future(self._resolve_and_store(ref, key))
            self._inflight[key] = future
            future.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(future)

    def _finished(self, key: str, future: asyncio.Future[ModelSpec]) -> None:
        if self._inflight.get(key) is future:
            del self._inflight[key]
        if not future.cancelled():
            future.exception()  # retrieved: no warning if every waiter was cancelled

    async def _resolve_and_store(self, ref: HubRef, key: str) -> ModelSpec:
        started = time.perf_counter()
        try:
            spec = await self._fetch(ref)
        except HubError as err:
            log.info("hub %s failed: %s (%.0f ms)", ref.id, err.kind.value,
                     (time.perf_counter() - started) * 1000)
            minutes = self.settings.negative_ttl_minutes
            if err.cacheable and minutes > 0:
                await self._cache_put(key, _encode_error(err), minutes * 60)
            raise
        log.info("hub %s resolved: %s, %d params (%.0f ms)", ref.id,
                 spec.hub.model_type if spec.hub else "?", spec.params,
                 (time.perf_counter() - started) * 1000)
        await self._cache_put(
            key, json.dumps({"spec": spec.model_dump(mode="json")}),
            self.settings.cache_ttl_days * 86400,
        )
        return spec

    async def _fetch(self, ref: HubRef) -> ModelSpec:
        self.settings.require_online(ref.id)
        endpoint = self.endpoint
        async with aiohttp.ClientSession() as session:  # the proxy: HubClient's, per request
            client = HubClient(session, endpoint, self.token, self.settings.timeout_s,
                               self.settings.timeout_setting)
            config, commit = await client.config(ref)
            mapped = _map(config, ref)
            origin = HubOrigin(
                repo=ref.repo,
                revision=ref.revision,
                commit=commit,
                model_type=mapped.model_type,
                language_model_only=mapped.multimodal,
                notes=mapped.notes,
            )
            origin = await _crosscheck(client, ref, commit or ref.revision, mapped, origin)
        return build_spec(ref, mapped, origin, f"{endpoint}/{ref.repo}/blob/"
                          f"{commit or ref.revision}/config.json")

    # -- the cache ------------------------------------------------------------------------
    async def _cache_get(self, key: str) -> str | None:
        if self.cache is None:
            return None
        try:
            return await self.cache.cache_get(key)
        except self.cache_errors as exc:
            log.warning("hub cache unavailable (%s): asking the Hub", type(exc).__name__)
            return None

    async def _cache_put(self, key: str, value: str, ttl_s: float) -> None:
        if self.cache is None:
            return
        try:
            await self.cache.cache_put(key, value, ttl_s)
        except self.cache_errors as exc:
            log.warning("hub cache unavailable (%s): answer not kept", type(exc).__name__)


def _map(config: Any, ref: HubRef) -> Mapped:
    """:func:`~catalog.hub.families.map_config`, with any arithmetic failure the bounds
    did not foresee turned into a cacheable :class:`HubError` rather than a traceback."""
    try:
        return map_config(config, ref)
    except (ArithmeticError, ValueError, RecursionError) as exc:
        log.exception("hub %s: config.json could not be mapped", ref.id)
        raise HubError(
            HubErrorKind.MALFORMED,
            f"config.json of {ref.id} holds a value ftcost cannot compute with "
            f"({type(exc).__name__}). The config looks broken; try another revision "
            "(org/name@rev) or the original repository.",
            ref.id,
        ) from exc


def build_spec(ref: HubRef, mapped: Mapped, origin: HubOrigin, source: str) -> ModelSpec:
    """The catalog entry for a resolved Hub model."""
    arch = mapped.architecture
    checkpoint = None if origin.language_model_only else origin.checkpoint_params
    return ModelSpec(
        id=ref.id,
        name=ref.id,
        family=f"hub:{mapped.model_type}",
        architecture=arch,
        official_params=float(checkpoint or arch.total_params),
        source=source,
        params_source=origin.checkpoint_source if checkpoint else "derived from config.json",
        notes=" ".join(origin.notes),
        hub=origin,
    )


async def _crosscheck(
    client: HubClient, ref: HubRef, revision: str, mapped: Mapped, origin: HubOrigin
) -> HubOrigin:
    """``origin`` with the checkpoint's parameter count, or the reason there is none."""
    if mapped.quantization:
        return origin.model_copy(update={"check_skipped": (
            f"the checkpoint is quantized ({mapped.quantization}), so its size is not a "
            "parameter count")})
    try:
        count = await _index_count(client, ref, revision, mapped)
        if count is None:
            count = await _header_count(client, ref, revision, mapped)
    except CheckpointFormatError as exc:
        return origin.model_copy(update={"check_skipped": str(exc)})
    except (ValueError, HubError) as exc:
        reason = str(exc) if isinstance(exc, HubError) else (
            f"unreadable metadata ({one_line(str(exc))})")
        log.info("hub %s: cross-check skipped: %s", ref.id, reason)
        return origin.model_copy(update={"check_skipped": (
            "the Hub did not give its safetensors metadata" if isinstance(exc, HubError)
            else reason)})
    except RecursionError:
        return origin.model_copy(update={"check_skipped": (
            "the safetensors metadata nests thousands of levels deep")})
    if count is None:
        return origin.model_copy(update={"check_skipped": (
            "the repository has no model.safetensors index or single file to compare with")})
    return origin.model_copy(
        update={"checkpoint_params": count.params, "checkpoint_source": count.source}
    )


async def _index_count(
    client: HubClient, ref: HubRef, revision: str, mapped: Mapped
) -> Count | None:
    index = await client.optional_json(ref, INDEX_FILE, revision)
    if index is None:
        return None
    return count_from_index(index, mapped.dtype, mapped.architecture)


async def _header_count(
    client: HubClient, ref: HubRef, revision: str, mapped: Mapped
) -> Count | None:
    first = await client.optional_range(ref, SINGLE_FILE, revision, 0, FIRST_READ_BYTES - 1)
    if first is None:
        return None
    length = header_length(first[:HEADER_PREFIX_BYTES])
    end = HEADER_PREFIX_BYTES + length
    if len(first) >= end:
        header = first[HEADER_PREFIX_BYTES:end]
    else:
        rest = await client.optional_range(ref, SINGLE_FILE, revision, len(first), end - 1)
        if rest is None or len(first) + len(rest) < end:
            raise CheckpointFormatError("model.safetensors is shorter than its header says")
        header = (first + rest)[HEADER_PREFIX_BYTES:end]
    return count_from_header(header, mapped.architecture)


def _encode_error(err: HubError) -> str:
    return json.dumps({"error": {"kind": err.kind.value, "message": err.message}})


def _decode(value: str, ref: HubRef) -> ModelSpec | None:
    """A cached answer: the spec, a :class:`HubError` raised, or None (the Hub is asked
    again, one warning logged) if it is unreadable (a stale format) or holds what no
    fresh resolution stores (:func:`cached_problem`)."""
    try:
        doc: Any = json.loads(value)
        if "error" in doc:
            error = doc["error"]
            kind, message = HubErrorKind(error["kind"]), error["message"]
            if not isinstance(message, str):
                raise TypeError("the cached message is not text")  # unreadable, below
            err = HubError(kind, message, ref.id)
            if not err.cacheable:
                log.warning("hub cache entry for %s is a %s answer, which is never "
                            "cached: asking the Hub", ref.id, err.kind.value)
                return None
            raise err
        spec = ModelSpec.model_validate(doc["spec"])
    except HubError:
        raise
    except (ValueError, KeyError, TypeError, ValidationError, RecursionError):
        log.warning("hub cache entry for %s unreadable: asking the Hub", ref.id)
        return None
    problem = cached_problem(spec)
    if problem is not None:
        log.warning("hub cache entry for %s out of bounds (%s): asking the Hub", ref.id,
                    problem)
        return None
    return spec


def cached_problem(spec: ModelSpec) -> str | None:
    """Why ``spec``, read back from the cache, is not what a fresh resolution stores:
    no Hub origin, a ``model_type`` the resolver does not read, a size past the bounds
    of :mod:`catalog.hub.bounds` (:func:`~catalog.hub.bounds.architecture_problem`), or
    a parameter count over :data:`~catalog.hub.bounds.MAX_PARAMS` (also NaN and
    infinity); None when it passes them all."""
    hub = spec.hub
    if hub is None:
        return "no Hub origin"
    if hub.model_type not in FAMILIES:
        return f"model_type {one_line(repr(hub.model_type))} is not one ftcost reads"
    problem = architecture_problem(spec.architecture)
    if problem is not None:
        return problem
    counts = (spec.official_params, spec.official_active_params, hub.checkpoint_params)
    if any(c is not None and not c <= MAX_PARAMS for c in counts):
        return f"a parameter count over {MAX_PARAMS:,}"
    return None
