"""The Hub cache holds answers to the same bounds as a fresh fetch: an entry read back from
the cache (a shared Redis or SQLite store another process can write) that breaks them, or
cannot be decoded, is a cache miss: the Hub is asked again and one warning is logged."""

from __future__ import annotations

import copy
import json
import logging
import typing
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from catalog.hub import HubError, HubErrorKind, HubRef
from catalog.hub.bounds import (
    ARCHITECTURE_BOUNDS,
    MAX_HIDDEN,
    MAX_INTERMEDIATE,
    MAX_LAYERS,
    MAX_POSITIONS,
    MAX_VOCAB,
    MLA_BOUNDS,
    MOE_BOUNDS,
    architecture_problem,
)
from catalog.hub.resolver import HubResolver, MemoryCache
from catalog.hub.settings import HubSettings
from engine.architecture import MLA, Architecture, MoE
from tests.fakes.hub_configs import DEEPSEEK_V3, LLAMA_3_2_1B, MIXTRAL_8X7B, REAL_MODELS
from tests.fakes.hub_configs_classic import CLASSIC_MODELS, GPT2, OPT_125M
from tests.fakes.hub_server import FakeHub

Doc = dict[str, Any]




@pytest.fixture
def hub(hub: FakeHub) -> FakeHub:
    """The fake Hub serving every real model's files, the classic ones too."""
    hub.add_all_real()
    for model in CLASSIC_MODELS:
        hub.add_real(model)
    return hub


def resolver_for(hub: FakeHub, cache: MemoryCache) -> HubResolver:
    return HubResolver(HubSettings(endpoint=hub.base_url, timeout_s=2.0), cache)


def config_hits(hub: FakeHub, repo: str) -> int:
    return sum(h.path.endswith("/config.json") for h in hub.hits(repo))


async def tampered(hub: FakeHub, repo: str, change: Callable[[Doc], None]) -> HubResolver:
    """A resolver whose cache holds ``repo``'s real answer as ``change`` rewrote it."""
    cache = MemoryCache()
    resolver = resolver_for(hub, cache)
    await resolver.resolve(repo)
    key = resolver.cache_key(HubRef.parse(repo))
    stored = await cache.cache_get(key)
    assert stored is not None
    doc = json.loads(stored)
    change(doc["spec"])
    await cache.cache_put(key, json.dumps(doc), 3600)
    return resolver


def setting(path: str, value: Any) -> Callable[[Doc], None]:
    """A change that sets the cached spec's ``path`` (``architecture.moe.num_experts``)."""

    def change(spec: Doc) -> None:
        *parents, name = path.split(".")
        for parent in parents:
            spec = spec[parent]
        spec[name] = value

    return change


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "ftcost.hub" and r.levelno == logging.WARNING]


# -- what a fresh fetch stores passes ------------------------------------------------------


async def test_every_real_models_answer_is_read_back_from_the_cache(hub):
    resolver = resolver_for(hub, MemoryCache())
    models = [*REAL_MODELS, *CLASSIC_MODELS]
    first = [await resolver.resolve(m.repo) for m in models]
    asked = len(hub.hits())

    again = [await resolver.resolve(m.repo) for m in models]

    assert again == first and len(hub.hits()) == asked


@pytest.mark.parametrize(
    ("config", "changes"),
    [(OPT_125M.config, {"max_position_embeddings": MAX_POSITIONS}),
     (GPT2.config, {"n_embd": MAX_HIDDEN, "n_head": 1, "n_layer": 1, "vocab_size": 1})],
    ids=["opt-positions-at-the-bound", "gpt2-width-at-the-bound"],
)
async def test_a_config_at_the_bounds_is_read_back_from_the_cache(hub, config, changes):
    hub.add("acme/edge", {**copy.deepcopy(config), **changes})
    resolver = resolver_for(hub, MemoryCache())
    first = await resolver.resolve("acme/edge")

    again = await resolver.resolve("acme/edge")

    assert again == first and config_hits(hub, "acme/edge") == 1


@pytest.mark.parametrize(
    ("model", "bounds"),
    [(Architecture, ARCHITECTURE_BOUNDS), (MoE, MOE_BOUNDS), (MLA, MLA_BOUNDS)],
    ids=["architecture", "moe", "mla"],
)
def test_the_bounds_name_every_whole_number_field(model: type[BaseModel], bounds):
    hints = typing.get_type_hints(model)
    whole = {name for name in model.model_fields if int in (hints[name],
                                                             *typing.get_args(hints[name]))}

    assert set(bounds) == whole


def test_sizes_within_bounds_but_too_many_parameters_together_are_a_problem():
    arch = Architecture(hidden_size=MAX_HIDDEN, num_layers=MAX_LAYERS, num_heads=128,
                        num_kv_heads=128, intermediate_size=MAX_INTERMEDIATE,
                        vocab_size=MAX_VOCAB)

    assert architecture_problem(arch) is not None and "parameters" in str(
        architecture_problem(arch))


# -- what breaks them is a miss --------------------------------------------------------------


@pytest.mark.parametrize(
    ("repo", "path", "value"),
    [(LLAMA_3_2_1B.repo, "architecture.num_layers", 10**8),
     (LLAMA_3_2_1B.repo, "architecture.hidden_size", 10**12),
     (LLAMA_3_2_1B.repo, "architecture.vocab_size", 10**40),
     (LLAMA_3_2_1B.repo, "architecture.learned_positions", 10**9),
     (MIXTRAL_8X7B.repo, "architecture.moe.num_experts", 10**9),
     (DEEPSEEK_V3.repo, "architecture.mla.kv_lora_rank", 10**9),
     (LLAMA_3_2_1B.repo, "official_params", float("inf")),
     (LLAMA_3_2_1B.repo, "hub.checkpoint_params", 10**30)],
    ids=["num_layers", "hidden_size", "vocab_size", "learned_positions", "moe.num_experts",
         "mla.kv_lora_rank", "official_params", "checkpoint_params"],
)
async def test_a_cached_size_past_its_bound_is_fetched_again(hub, caplog, repo, path, value):
    resolver = await tampered(hub, repo, setting(path, value))
    caplog.set_level(logging.WARNING, "ftcost.hub")

    spec = await resolver.resolve(repo)

    assert config_hits(hub, repo) == 2
    assert spec == await resolver_for(hub, MemoryCache()).resolve(repo)
    assert [w for w in warnings_of(caplog) if "out of bounds" in w] == warnings_of(caplog)
    assert len(warnings_of(caplog)) == 1 and repo in warnings_of(caplog)[0]


async def test_cached_sizes_each_within_bounds_but_too_many_parameters_are_fetched_again(hub):
    widest = {"hidden_size": MAX_HIDDEN, "num_layers": MAX_LAYERS,
              "intermediate_size": MAX_INTERMEDIATE, "vocab_size": MAX_VOCAB}

    def change(spec: Doc) -> None:
        spec["architecture"].update(widest)

    resolver = await tampered(hub, LLAMA_3_2_1B.repo, change)

    spec = await resolver.resolve(LLAMA_3_2_1B.repo)

    assert config_hits(hub, LLAMA_3_2_1B.repo) == 2 and spec.architecture.num_layers == 16


async def test_a_cached_family_ftcost_does_not_read_is_fetched_again(hub, caplog):
    resolver = await tampered(hub, LLAMA_3_2_1B.repo, setting("hub.model_type", "\x1b[2Jmamba"))
    caplog.set_level(logging.WARNING, "ftcost.hub")

    spec = await resolver.resolve(LLAMA_3_2_1B.repo)

    assert spec.hub is not None and spec.hub.model_type == "llama"
    assert config_hits(hub, LLAMA_3_2_1B.repo) == 2
    assert len(warnings_of(caplog)) == 1 and "\x1b" not in warnings_of(caplog)[0]


async def test_a_cached_spec_without_its_hub_origin_is_fetched_again(hub):
    resolver = await tampered(hub, LLAMA_3_2_1B.repo, setting("hub", None))

    spec = await resolver.resolve(LLAMA_3_2_1B.repo)

    assert spec.hub is not None and config_hits(hub, LLAMA_3_2_1B.repo) == 2


async def test_the_fresh_answer_replaces_the_bad_entry(hub):
    resolver = await tampered(hub, LLAMA_3_2_1B.repo, setting("architecture.num_layers", 10**8))
    await resolver.resolve(LLAMA_3_2_1B.repo)

    await resolver.resolve(LLAMA_3_2_1B.repo)

    assert config_hits(hub, LLAMA_3_2_1B.repo) == 2


# -- entries that cannot be decoded, and errors never cached --------------------------------


@pytest.mark.parametrize(
    "stored",
    ["{not json", "[" * 100_000 + "]" * 100_000, '"a string"', '{"spec": {"id": 1}}',
     '{"error": {"kind": "no-such-kind", "message": "x"}}',
     '{"error": {"kind": "not-found", "message": ["x"]}}'],
    ids=["not-json", "nested-100000-deep", "not-an-object", "not-a-spec", "unknown-kind",
         "message-not-text"],
)
async def test_an_undecodable_entry_is_fetched_again_with_one_warning(hub, caplog, stored):
    cache = MemoryCache()
    resolver = resolver_for(hub, cache)
    await cache.cache_put(resolver.cache_key(HubRef.parse(LLAMA_3_2_1B.repo)), stored, 60)
    caplog.set_level(logging.WARNING, "ftcost.hub")

    spec = await resolver.resolve(LLAMA_3_2_1B.repo)

    assert spec.hub is not None and config_hits(hub, LLAMA_3_2_1B.repo) == 1
    assert len(warnings_of(caplog)) == 1


@pytest.mark.parametrize("kind", [HubErrorKind.TIMEOUT, HubErrorKind.AUTH, HubErrorKind.OFFLINE])
async def test_a_cached_error_of_a_kind_never_cached_is_fetched_again(hub, caplog, kind):
    cache = MemoryCache()
    resolver = resolver_for(hub, cache)
    entry = json.dumps({"error": {"kind": kind.value, "message": "try again later"}})
    await cache.cache_put(resolver.cache_key(HubRef.parse(LLAMA_3_2_1B.repo)), entry, 60)
    caplog.set_level(logging.WARNING, "ftcost.hub")

    spec = await resolver.resolve(LLAMA_3_2_1B.repo)

    assert spec.hub is not None and config_hits(hub, LLAMA_3_2_1B.repo) == 1
    assert len(warnings_of(caplog)) == 1


async def test_a_cached_negative_answer_is_still_answered_from_the_cache(hub):
    cache = MemoryCache()
    resolver = resolver_for(hub, cache)
    entry = json.dumps({"error": {"kind": "not-found", "message": "No model acme/gone"}})
    await cache.cache_put(resolver.cache_key(HubRef.parse("acme/gone")), entry, 60)

    with pytest.raises(HubError) as info:
        await resolver.resolve("acme/gone")

    assert info.value.kind is HubErrorKind.NOT_FOUND and hub.hits() == []
