"""The Hub resolver against a local fake of the Hub: provenance, the checkpoint
cross-check, every error the user can meet, and the cache."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from adapters.report import hub_notes, hub_warnings
from bot.store import StoreUnavailable
from bot.store_sqlite import SQLiteStore
from catalog.hub import HubError, HubErrorKind
from catalog.hub.resolver import HubResolver, MemoryCache
from catalog.hub.settings import HubSettings
from tests.fakes.hub_configs import (
    DEEPSEEK_V3,
    GEMMA_3_4B,
    GEMMA_3_4B_INDEX_TOTAL_SIZE,
    LLAMA_3_1_8B,
    LLAMA_3_2_1B,
    LLAMA_3_2_1B_TENSORS,
    MIXTRAL_8X7B,
    OLMO_2_13B,
    QWEN2_5_7B_INSTRUCT,
    llama_tensors,
)
from tests.fakes.hub_server import (
    TOKEN,
    FakeHub,
    commit_for,
    index_json,
    safetensors_bytes,
)

TIMEOUT_S = 0.3




@pytest.fixture
def hub(hub: FakeHub) -> FakeHub:
    """The fake Hub serving every real model's files."""
    hub.add_all_real()
    return hub


def resolver_for(hub: FakeHub, cache: Any = None, **settings: Any) -> HubResolver:
    return HubResolver(
        HubSettings(endpoint=hub.base_url, timeout_s=TIMEOUT_S, **settings),
        cache if cache is not None else MemoryCache(),
    )


async def failure(resolver: HubResolver, ref: str) -> HubError:
    with pytest.raises(HubError) as info:
        await resolver.resolve(ref)
    return info.value


# -- a resolution ------------------------------------------------------------------------------


async def test_resolved_model_carries_repo_revision_and_commit(hub):
    spec = await resolver_for(hub).resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert spec.id == spec.name == "Qwen/Qwen2.5-7B-Instruct"
    assert spec.hub is not None
    assert (spec.hub.repo, spec.hub.revision, spec.hub.model_type) == (
        "Qwen/Qwen2.5-7B-Instruct", "main", "qwen2"
    )
    assert spec.hub.commit == commit_for("Qwen/Qwen2.5-7B-Instruct")


async def test_a_named_revision_is_fetched_and_becomes_part_of_the_id(hub):
    hub.add("acme/llama-ft", LLAMA_3_1_8B.config, branches=("main", "v2"))

    spec = await resolver_for(hub).resolve("acme/llama-ft@v2")

    assert spec.id == "acme/llama-ft@v2" and spec.hub is not None
    assert spec.hub.revision == "v2" and spec.hub.commit == commit_for("acme/llama-ft", "v2")
    assert hub.hits()[0].path == "/acme/llama-ft/resolve/v2/config.json"


async def test_hf_endpoint_from_the_environment_is_used(hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.base_url)

    spec = await HubResolver(HubSettings(timeout_s=TIMEOUT_S)).resolve(MIXTRAL_8X7B.repo)

    assert spec.hub is not None and spec.hub.model_type == "mixtral"


async def test_no_authorization_header_without_a_token(hub):
    await resolver_for(hub).resolve(MIXTRAL_8X7B.repo)

    assert {h.authorization for h in hub.hits()} == {None}


# -- the checkpoint cross-check ----------------------------------------------------------------


async def test_index_total_size_over_dtype_bytes_is_compared(hub):
    spec = await resolver_for(hub).resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert spec.hub is not None and spec.hub.checkpoint_params == 15_231_233_024 // 2
    assert "total_size 15,231,233,024 B / 2 B (bfloat16)" in spec.hub.checkpoint_source
    assert hub_warnings(spec) == []
    assert any(n.startswith("Matches the checkpoint") for n in hub_notes(spec))


async def test_float32_checkpoint_divides_by_four(hub):
    spec = await resolver_for(hub).resolve(OLMO_2_13B.repo)

    assert spec.hub is not None and spec.hub.checkpoint_params == 54_864_793_600 // 4


async def test_config_and_weights_disagreeing_above_two_percent_warn(hub):
    # An 8B config over the index of a 3.2B checkpoint (a mislabelled upload).
    hub.add("acme/mislabelled", LLAMA_3_1_8B.config, index=index_json(6_425_499_648))

    spec = await resolver_for(hub).resolve("acme/mislabelled")

    (warning,) = hub_warnings(spec)
    assert "config.json gives 8.03B parameters but the checkpoint holds 3.21B" in warning
    assert "(150% apart" in warning


async def test_single_file_header_is_read_with_range_requests(hub):
    hub.add("acme/tiny", LLAMA_3_2_1B.config,
            safetensors=safetensors_bytes(LLAMA_3_2_1B_TENSORS))

    spec = await resolver_for(hub).resolve("acme/tiny")

    shapes_total = sum(_prod(s) for s in LLAMA_3_2_1B_TENSORS.values())
    assert spec.hub is not None and spec.hub.checkpoint_params == shapes_total
    assert spec.params == shapes_total
    ranges = [h.range for h in hub.hits() if h.path.endswith("/model.safetensors")]
    assert ranges == ["bytes=0-65535"]


async def test_a_header_longer_than_the_first_read_is_fetched_in_a_second_range(hub):
    body = safetensors_bytes(LLAMA_3_2_1B_TENSORS, metadata_pad=100_000)
    hub.add("acme/long-header", LLAMA_3_2_1B.config, safetensors=body)

    spec = await resolver_for(hub).resolve("acme/long-header")

    ranges = [h.range for h in hub.hits() if h.path.endswith("/model.safetensors")]
    assert ranges == ["bytes=0-65535", f"bytes=65536-{len(body) - 1}"]
    assert spec.hub is not None and spec.hub.checkpoint_params == spec.params


async def test_a_stored_copy_of_a_tied_head_is_not_counted_twice(hub):
    untied = llama_tensors(layers=16, hidden=2048, inter=8192, heads=32, kv_heads=8,
                           head_dim=64, vocab=128256, tied=False)
    hub.add("acme/tiny-with-head", LLAMA_3_2_1B.config, safetensors=safetensors_bytes(untied))

    spec = await resolver_for(hub).resolve("acme/tiny-with-head")

    assert spec.hub is not None and spec.hub.checkpoint_params == spec.params
    assert "less the stored copy of the tied lm_head" in spec.hub.checkpoint_source


async def test_the_check_fetches_files_at_the_resolved_commit(hub):
    await resolver_for(hub).resolve(QWEN2_5_7B_INSTRUCT.repo)

    commit = commit_for(QWEN2_5_7B_INSTRUCT.repo)
    assert [h.path for h in hub.hits()] == [
        "/Qwen/Qwen2.5-7B-Instruct/resolve/main/config.json",
        f"/Qwen/Qwen2.5-7B-Instruct/resolve/{commit}/model.safetensors.index.json",
    ]


async def test_quantized_checkpoints_are_not_compared(hub):
    spec = await resolver_for(hub).resolve(DEEPSEEK_V3.repo)

    assert spec.hub is not None and spec.hub.checkpoint_params is None
    assert "quantized (fp8)" in spec.hub.check_skipped
    assert [h.path.rsplit("/", 1)[-1] for h in hub.hits()] == ["config.json"]


async def test_no_index_and_no_single_file_is_not_an_error(hub):
    spec = await resolver_for(hub).resolve(MIXTRAL_8X7B.repo)

    assert spec.hub is not None and spec.hub.checkpoint_params is None
    assert "no model.safetensors index or single file" in spec.hub.check_skipped
    assert any(n.startswith("Not checked against the weights") for n in hub_notes(spec))


async def test_multimodal_checkpoint_is_explained_not_warned(hub):
    hub.add("acme/gemma3-4b", GEMMA_3_4B.config, index=index_json(GEMMA_3_4B_INDEX_TOTAL_SIZE))

    spec = await resolver_for(hub).resolve("acme/gemma3-4b")

    assert hub_warnings(spec) == []
    assert any("4.30B with its vision encoder" in n for n in hub_notes(spec))


async def test_a_broken_index_skips_the_check_without_failing(hub):
    hub.add("acme/bad-index", LLAMA_3_1_8B.config, index={"weight_map": {}})

    spec = await resolver_for(hub).resolve("acme/bad-index")

    assert spec.hub is not None and "no metadata object" in spec.hub.check_skipped


# -- errors --------------------------------------------------------------------------------------


async def test_gated_repo_without_a_token_says_to_set_hf_token(hub):
    hub.add("acme/gated", LLAMA_3_1_8B.config, gated=True)

    err = await failure(resolver_for(hub), "acme/gated")

    assert err.kind is HubErrorKind.GATED and not err.cacheable
    assert "acme/gated is gated: accept its licence on" in str(err)
    assert "set HF_TOKEN" in str(err)


async def test_gated_repo_with_hf_token_resolves_and_sends_it(hub, monkeypatch):
    hub.add("acme/gated", LLAMA_3_1_8B.config, gated=True)
    monkeypatch.setenv("HF_TOKEN", TOKEN)

    spec = await resolver_for(hub).resolve("acme/gated")

    assert spec.hub is not None and spec.hub.model_type == "llama"
    assert {h.authorization for h in hub.hits("acme/gated")} == {f"Bearer {TOKEN}"}


async def test_gated_repo_with_a_token_lacking_access_says_so(hub, monkeypatch):
    hub.add("acme/gated", LLAMA_3_1_8B.config, gated=True)
    monkeypatch.setenv("HF_TOKEN", "hf_someone_else")

    err = await failure(resolver_for(hub), "acme/gated")

    assert "the account of the HF_TOKEN token has no access yet" in str(err)


async def test_missing_repo_says_no_such_model_and_to_check_the_spelling(hub):
    err = await failure(resolver_for(hub), "acme/nope")

    assert err.kind is HubErrorKind.NOT_FOUND and err.ref == "acme/nope"
    assert str(err).startswith("No model acme/nope on the Hugging Face Hub: check the spelling")


async def test_missing_revision_names_it(hub):
    err = await failure(resolver_for(hub), f"{MIXTRAL_8X7B.repo}@v9")

    assert err.kind is HubErrorKind.REVISION_NOT_FOUND
    assert "mistralai/Mixtral-8x7B-v0.1 has no revision 'v9'" in str(err)


async def test_repo_without_config_is_not_a_model_we_can_size(hub):
    hub.add("acme/gguf-only", None)

    err = await failure(resolver_for(hub), "acme/gguf-only")

    assert err.kind is HubErrorKind.NO_CONFIG
    assert "acme/gguf-only has no config.json at revision main" in str(err)


async def test_slow_hub_times_out_with_the_limit_in_the_message(hub):
    hub.add("acme/slow", LLAMA_3_1_8B.config, delay_s=5)

    err = await failure(resolver_for(hub), "acme/slow")

    assert err.kind is HubErrorKind.TIMEOUT and not err.cacheable
    assert f"did not answer within {TIMEOUT_S:g} s for acme/slow" in str(err)


async def test_malformed_json_names_the_place(hub):
    hub.add("acme/broken", '{"model_type": "llama", "hidden_size": 4096,,}')

    err = await failure(resolver_for(hub), "acme/broken")

    assert err.kind is HubErrorKind.MALFORMED
    assert "config.json of acme/broken is not valid JSON (" in str(err)
    assert "line 1 column" in str(err)


async def test_unsupported_model_type_over_http(hub):
    hub.add("state-spaces/mamba-2.8b-hf", {"model_type": "mamba", "hidden_size": 2560})

    err = await failure(resolver_for(hub), "state-spaces/mamba-2.8b-hf")

    assert "model_type 'mamba' (state-spaces/mamba-2.8b-hf) is not supported yet" in str(err)


async def test_missing_field_over_http(hub):
    config = {k: v for k, v in LLAMA_3_1_8B.config.items() if k != "intermediate_size"}
    hub.add("acme/partial", config)

    err = await failure(resolver_for(hub), "acme/partial")

    assert "lacks intermediate_size" in str(err)


async def test_hub_outage_says_to_try_again(hub):
    hub.add("acme/down", LLAMA_3_1_8B.config, fail_status=503)

    err = await failure(resolver_for(hub), "acme/down")

    assert err.kind is HubErrorKind.UNAVAILABLE and not err.cacheable
    assert "answered HTTP 503" in str(err) and "try again" in str(err)


async def test_unreachable_endpoint_names_it():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    resolver = HubResolver(HubSettings(endpoint=f"http://127.0.0.1:{port}", timeout_s=2))

    err = await failure(resolver, "acme/x")

    assert err.kind is HubErrorKind.UNAVAILABLE
    assert f"Cannot reach the Hugging Face Hub at http://127.0.0.1:{port}" in str(err)


async def test_bad_revision_text_fails_before_any_request(hub):
    err = await failure(resolver_for(hub), "acme/x@")

    assert err.kind is HubErrorKind.BAD_REF and hub.hits() == []


# -- the cache -------------------------------------------------------------------------------


async def test_second_resolution_makes_no_request(hub):
    resolver = resolver_for(hub)
    first = await resolver.resolve(QWEN2_5_7B_INSTRUCT.repo)
    made = len(hub.hits())

    second = await resolver.resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert made == 2 and len(hub.hits()) == made
    assert second == first and second.params == first.params


async def test_the_state_store_shares_resolutions_across_resolvers(hub, tmp_path):
    async with SQLiteStore(tmp_path / "state.sqlite3") as store:
        await resolver_for(hub, store).resolve(LLAMA_3_1_8B.repo)
        made = len(hub.hits())

        spec = await resolver_for(hub, store).resolve(LLAMA_3_1_8B.repo)

    assert len(hub.hits()) == made
    assert spec.hub is not None and spec.hub.checkpoint_params == spec.params


class RecordingCache(MemoryCache):
    def __init__(self) -> None:
        super().__init__()
        self.ttls: dict[str, float] = {}

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        self.ttls[key] = ttl_s
        await super().cache_put(key, value, ttl_s)


async def test_results_are_kept_seven_days_and_negatives_ten_minutes(hub):
    cache = RecordingCache()
    resolver = resolver_for(hub, cache)
    await resolver.resolve(MIXTRAL_8X7B.repo)
    await failure(resolver, "acme/nope")

    assert sorted(cache.ttls.values()) == [10 * 60, 7 * 86400]


async def test_ttls_come_from_the_settings(hub):
    cache = RecordingCache()
    resolver = resolver_for(hub, cache, cache_ttl_days=1, negative_ttl_minutes=2)
    await resolver.resolve(MIXTRAL_8X7B.repo)
    await failure(resolver, "acme/nope")

    assert sorted(cache.ttls.values()) == [120, 86400]


async def test_a_missing_model_is_remembered_briefly(hub):
    now = [0.0]
    resolver = resolver_for(hub, MemoryCache(clock=lambda: now[0]))
    first = await failure(resolver, "acme/nope")

    second = await failure(resolver, "acme/nope")
    asked = len(hub.hits())
    now[0] += 11 * 60
    await failure(resolver, "acme/nope")

    assert asked == 1 and len(hub.hits()) == 2
    assert str(second) == str(first) and second.kind is HubErrorKind.NOT_FOUND


async def test_an_unsupported_family_is_remembered(hub):
    hub.add("acme/mamba", {"model_type": "mamba"})
    resolver = resolver_for(hub)
    await failure(resolver, "acme/mamba")

    err = await failure(resolver, "acme/mamba")

    assert err.kind is HubErrorKind.UNSUPPORTED and len(hub.hits()) == 1


async def test_a_timeout_is_not_remembered(hub):
    hub.add("acme/slow", LLAMA_3_1_8B.config, delay_s=5)
    resolver = resolver_for(hub)
    await failure(resolver, "acme/slow")

    await failure(resolver, "acme/slow")

    assert len(hub.hits()) == 2


async def test_a_gated_refusal_is_not_remembered_so_a_token_fixes_it(hub, monkeypatch):
    hub.add("acme/gated", LLAMA_3_1_8B.config, gated=True)
    resolver = resolver_for(hub)
    await failure(resolver, "acme/gated")
    monkeypatch.setenv("HF_TOKEN", TOKEN)

    spec = await resolver.resolve("acme/gated")

    assert spec.id == "acme/gated"


class DownStore:
    async def cache_get(self, key: str) -> str | None:
        raise StoreUnavailable("redis is down")

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        raise StoreUnavailable("redis is down")


async def test_an_unavailable_store_means_resolving_without_the_cache(hub):
    resolver = HubResolver(
        HubSettings(endpoint=hub.base_url, timeout_s=TIMEOUT_S), DownStore(),
        cache_errors=(StoreUnavailable,),
    )

    first = await resolver.resolve(MIXTRAL_8X7B.repo)
    second = await resolver.resolve(MIXTRAL_8X7B.repo)

    assert first == second and len(config_hits(hub)) == 2


async def test_concurrent_resolutions_share_one_set_of_requests(hub):
    resolver = resolver_for(hub)

    specs = await asyncio.gather(*(resolver.resolve(MIXTRAL_8X7B.repo) for _ in range(5)))

    assert len({s.params for s in specs}) == 1
    assert len(config_hits(hub)) == 1


async def test_an_unreadable_cache_entry_is_asked_again(hub):
    cache = MemoryCache()
    resolver = resolver_for(hub, cache)
    await cache.cache_put(resolver.cache_key(_ref(MIXTRAL_8X7B.repo)), "{not json", 60)

    spec = await resolver.resolve(MIXTRAL_8X7B.repo)

    assert spec.hub is not None and len(config_hits(hub)) == 1


def config_hits(hub: FakeHub) -> list[Any]:
    return [h for h in hub.hits() if h.path.endswith("/config.json")]


def _ref(text: str):
    from catalog.hub import HubRef

    return HubRef.parse(text)


def _prod(shape: list[int]) -> int:
    out = 1
    for d in shape:
        out *= d
    return out
