"""How big a cluster a plan may use: machines of one card type (``gpus_per_node``), the
cards a type rents together (``max_nodes``), and the cluster size a plan nobody sized is
offered on (``MAX_CLUSTER_NODES``)."""

from __future__ import annotations

from engine import Request, estimate
from engine.choices import Sharding
from engine.collectives import nodes_for
from engine.constants import GPUS_PER_NODE, MAX_CLUSTER_NODES
from engine.fit import card_limit
from engine.profiles import resolve
from engine.throughput import step_time
from engine.workload import workload
from tests.helpers import H100_LIKE, catalog_with, gpu

ONE_PER_MACHINE = gpu("solo", 80, bf16_tflops=1000.0, matmul_tflops=800.0, hbm_gbps=3000.0,
                      link_gbps=450.0, gpus_per_node=1)
SINGLE_MACHINES = gpu("desk", 24, fabric="pcie", p2p=False, link_gbps=31.5, max_nodes=1,
                      price_per_gpu_hour=0.1)


def test_a_card_sold_one_per_machine_spans_a_node_per_card() -> None:
    assert nodes_for(4, per_node=ONE_PER_MACHINE.gpus_per_node) == 4
    assert nodes_for(4, per_node=GPUS_PER_NODE) == 1


def test_nodes_named_never_pack_more_cards_than_a_machine_holds() -> None:
    assert nodes_for(16, nodes=2, per_node=1) == 16
    assert nodes_for(16, nodes=2) == 2


def test_cards_one_per_machine_talk_over_the_network(catalog) -> None:
    request = resolve(Request(model="llama-3.1-8b", method="full", micro_batch=4))
    work = workload(catalog.model("llama-3.1-8b").architecture, request)
    boxed = step_time(work, H100_LIKE, 4, Sharding.FSDP, False)
    apart = step_time(work, ONE_PER_MACHINE, 4, Sharding.FSDP, False)
    assert apart.comm_s > 5 * boxed.comm_s


def test_a_card_rented_as_single_machines_is_offered_on_one_machine_at_most() -> None:
    assert card_limit(SINGLE_MACHINES) == GPUS_PER_NODE
    est = estimate(Request(model="llama-3.1-70b", method="full", dataset_tokens=10**7),
                   catalog_with(SINGLE_MACHINES, H100_LIKE))
    assert all(o.count <= GPUS_PER_NODE for o in est.options if o.gpu.id == "desk")
    assert est.options and est.options[0].gpu.id == "g80"


def test_a_plan_nobody_sized_stays_within_the_largest_rentable_cluster() -> None:
    assert card_limit(H100_LIKE) == MAX_CLUSTER_NODES * GPUS_PER_NODE
    est = estimate(Request(model="llama-3.1-405b", method="full", dataset_tokens=10**7),
                   catalog_with(gpu("small", 24), H100_LIKE))
    assert all(o.count <= card_limit(o.gpu) for o in est.options)


def test_a_count_the_user_names_is_sized_as_asked() -> None:
    request = Request(model="llama-3.1-70b", method="full", gpu="desk", gpu_count=16,
                      dataset_tokens=10**7)
    est = estimate(request, catalog_with(SINGLE_MACHINES, H100_LIKE))
    assert est.options[0].gpu.id == "desk" and est.options[0].count == 16
