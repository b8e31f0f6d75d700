"""What offload moves: the optimizer alone (DeepSpeed's ``offload_optimizer``), or the
weight shards too (``offload_param``, FSDP's CPUOffload). Said in the query or read from
a DeepSpeed config."""

from __future__ import annotations

import pytest

from adapters.parse import QueryError, apply_followup, parse_query
from adapters.trainconfig import read_config
from catalog.loader import default_catalog
from engine import Request
from engine.choices import Sharding
from engine.memory import footprint
from engine.profiles import resolve
from engine.specs import Catalog
from engine.throughput import step_time
from engine.workload import workload
from tests.helpers import H100_LIKE

CAT = default_catalog()
CARD = H100_LIKE
RUN = {"model": "llama-3.1-70b", "method": "full", "offload": True, "sharding": "zero3"}


def _per_gpu(catalog: Catalog, **fields) -> float:
    request = resolve(Request(**{**RUN, **fields}))
    fp = footprint(catalog.model(request.model).architecture, request)
    return fp.per_gpu(Sharding.ZERO3, 8, offload=True).total


def test_offloading_only_the_optimizer_keeps_each_weight_shard(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-70b").architecture
    shard = arch.total_params * 2 / 8 / 1e9
    kept = _per_gpu(catalog, offload_weights=False) - _per_gpu(catalog)
    assert kept == pytest.approx(shard, rel=1e-6)


def test_offloading_only_the_optimizer_moves_no_weights_per_micro_batch(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-70b").architecture
    both = workload(arch, resolve(Request(**RUN)))
    optimizer = workload(arch, resolve(Request(**RUN, offload_weights=False)))
    slow = step_time(both, CARD, 8, Sharding.ZERO3, offload=True)
    fast = step_time(optimizer, CARD, 8, Sharding.ZERO3, offload=True)
    assert fast.offload_s < slow.offload_s


@pytest.mark.parametrize("text", ["offload optimizer", "optimizer offload", "offload_optimizer"])
def test_offload_optimizer_words_offload_the_optimizer_only(text: str) -> None:
    request = parse_query(f"70b full zero3 {text} 8x a100", CAT)
    assert request.offload is True and request.offload_weights is False


@pytest.mark.parametrize(
    "text", ["offload params", "offload_param", "param offload", "offload all", "offload"]
)
def test_param_offload_words_and_plain_offload_move_the_weights_too(text: str) -> None:
    request = parse_query(f"70b full zero3 {text} 8x a100", CAT)
    assert request.offload is True and request.offload_weights is True


def test_offload_optimizer_beside_no_offload_is_refused() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("70b full zero3 no-offload offload optimizer 8x a100", CAT)
    assert "say one" in caught.value.message


def test_a_followup_can_narrow_offload_to_the_optimizer() -> None:
    previous = parse_query("70b full zero3 offload 8x a100", CAT)
    after = apply_followup(previous, "offload optimizer", CAT)
    assert after.offload is True and after.offload_weights is False


def test_a_deepspeed_config_with_offload_optimizer_alone_keeps_the_weights() -> None:
    config = read_config(
        'model_name_or_path: meta-llama/Llama-3.1-70B\ndeepspeed: {"zero_optimization": '
        '{"stage": 3, "offload_optimizer": {"device": "cpu"}}}\n'
    )
    assert config.fields["offload"] is True and config.fields["offload_weights"] is False


def test_a_deepspeed_config_with_offload_param_moves_the_weights() -> None:
    config = read_config(
        'model_name_or_path: meta-llama/Llama-3.1-70B\ndeepspeed: {"zero_optimization": '
        '{"stage": 3, "offload_optimizer": {"device": "cpu"}, '
        '"offload_param": {"device": "cpu"}}}\n'
    )
    assert config.fields["offload"] is True and config.fields["offload_weights"] is True


def test_the_host_memory_of_an_offloaded_rack_is_spread_over_its_hosts(
    catalog: Catalog,
) -> None:
    """An NVL72 "node" of 72 GB200s is many hosts: the RAM asked for is per host of at most
    eight cards, as the offloaded step is timed (``GpuSpec.host_cards``)."""
    from engine import estimate

    est = estimate(Request(model="llama-3.1-70b", method="full", sharding="zero3", offload=True,
                           dataset_tokens=10**9, gpu="gb200", gpu_count=64), catalog)
    line = next(w for w in est.warnings if w.startswith("CPU offload"))
    assert "on each of 8 host(s)" in line
    assert catalog.gpus["gb200"].host_cards == 8


def _host_gb(line: str) -> float:
    return float(line.split("needs about ")[1].split(" GB")[0].replace(",", ""))


def test_host_ram_of_one_card_lora_offload_is_only_the_adapters_state(catalog: Catalog) -> None:
    """On one card nothing is sharded: only the optimizer (and its adapters' gradients)
    leaves the GPU, not the frozen base as under ZeRO-3."""
    from engine import estimate

    est = estimate(Request(model="llama-3.1-8b", method="lora", offload=True, framework="hf",
                           dataset_tokens=10**7, gpu="rtx-3090", gpu_count=1), catalog)
    line = next(w for w in est.warnings if w.startswith("CPU offload"))
    assert _host_gb(line) < 2


def test_host_ram_of_ddp_replicas_counts_every_replicas_offload(catalog: Catalog) -> None:
    from engine import estimate

    fields = dict(model="llama-3.1-8b", method="full", offload=True, sharding="none",
                  dataset_tokens=10**7, gpu="h100-sxm")
    one = estimate(Request(**fields, gpu_count=1), catalog)
    four = estimate(Request(**fields, gpu_count=4), catalog)
    host = [_host_gb(next(w for w in e.warnings if w.startswith("CPU offload")))
            for e in (one, four)]
    assert host[1] == pytest.approx(4 * host[0], rel=0.02)


def test_host_ram_of_hsdp_counts_every_replica_groups_offload(catalog: Catalog) -> None:
    """HSDP repeats its shard group on every node: each group offloads a whole state."""
    from engine import estimate

    def host(sharding: str) -> float:
        est = estimate(Request(model="llama-3.1-70b", method="full", sharding=sharding,
                               offload=True, dataset_tokens=10**7, gpu="h100-sxm",
                               gpu_count=16, nodes=2), catalog)
        return _host_gb(next(w for w in est.warnings if w.startswith("CPU offload")))

    assert host("hsdp") == pytest.approx(2 * host("fsdp"), rel=0.02)


def test_offload_on_named_ddp_replicas_says_ddp_offloads_nothing(catalog: Catalog) -> None:
    from engine import estimate

    est = estimate(Request(model="llama-3.1-8b", method="full", offload=True, sharding="none",
                           dataset_tokens=10**7, gpu="h100-sxm", gpu_count=4), catalog)
    line = next(w for w in est.warnings if w.startswith("CPU offload"))
    assert "each of the 4 replicas" in line and "`zero2 offload`" in line
