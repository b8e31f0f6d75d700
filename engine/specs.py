"""Catalog entries (models and GPUs) and the in-memory catalog the engine reads.

These are plain validated data; reading them from YAML is ``catalog.loader``'s job,
so the engine stays free of I/O.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterable
from datetime import date, datetime
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engine.architecture import Architecture
from engine.constants import (
    CARD_GB_BYTES,
    GB,
    GPUS_PER_NODE,
    MAX_GPUS_PER_NODE,
    MAX_NODES,
    SYNTHETIC_MAX_B,
    SYNTHETIC_MIN_B,
    SYNTHETIC_TIED_BELOW_B,
)

_SYNTHETIC = re.compile(r"^synthetic-(\d+(?:\.\d+)?)b$")


def _model_names(m: ModelSpec) -> list[str]:
    """Every name a model answers to: id, name, aliases, then each Hub alias's repository
    name without its owner (``Meta-Llama-3.1-8B-Instruct`` for
    ``meta-llama/Meta-Llama-3.1-8B-Instruct``), which comes last so it never shadows."""
    said = [*m.aliases, *m.stand_ins]
    repos = [alias.rsplit("/", 1)[1] for alias in said if "/" in alias]
    return [m.id, m.name, *said, *repos]


def normalize_name(text: str) -> str:
    """Lower-case a name and drop separators so ``Llama-3.1 8B`` ~ ``llama3.18b``."""
    return re.sub(r"[\s_\-/:]+", "", text.strip().lower())


class HubOrigin(BaseModel):
    """Where a model read from the Hugging Face Hub came from (built by ``catalog.hub``).

    Plain data: the engine never reads it; the report words it ("read from the Hub at
    revision main, commit 1a2b3c4d5e6f") and compares ``checkpoint_params`` with the
    architecture's count.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    repo: str
    """``org/name`` as the Hub spells it."""
    revision: str = "main"
    """Branch, tag or commit the user asked for (``org/name@rev``; ``main`` by default)."""
    commit: str | None = None
    """The commit the revision pointed at (the Hub's ``X-Repo-Commit`` header), if sent."""
    model_type: str
    """``config.json``'s ``model_type`` (the architecture family)."""
    checkpoint_params: int | None = None
    """Parameters the checkpoint's safetensors metadata holds, when it could be read."""
    checkpoint_source: str = ""
    """Which file gave ``checkpoint_params`` and how (index ``total_size`` / dtype bytes,
    or the sum of the tensor shapes in a ``model.safetensors`` header)."""
    check_skipped: str = ""
    """Why the checkpoint could not be compared, when it could not (empty otherwise)."""
    language_model_only: bool = False
    """Multimodal checkpoint: the architecture covers the language model only, so the
    checkpoint's count (vision encoder included) is larger by design."""
    notes: tuple[str, ...] = ()
    """Facts about how the config was read (defaults filled in, layers not counted...)."""


class ModelSpec(BaseModel):
    """A model in the catalog: its architecture plus identity and provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    family: str
    aliases: tuple[str, ...] = ()
    stand_ins: tuple[str, ...] = ()
    """Names of other checkpoints of this architecture that are counted as this model
    (``llama-3-8b`` for Llama 3.1 8B, ``deepseek-r1`` for DeepSeek-V3): they resolve like
    aliases, and the reply says which model they were counted as."""
    sizes: tuple[str, ...] = ()
    """Bare sizes (``8b``, ``70b``) that resolve to this model."""
    architecture: Architecture
    official_params: float = Field(gt=0)
    """Parameter total the publisher states (for the 1% check)."""
    official_active_params: float | None = None
    source: str
    """Where the architecture fields were read (URL of the config.json copy)."""
    params_source: str = ""
    notes: str = ""
    synthetic: bool = False
    hub: HubOrigin | None = None
    """Set for a model read from the Hugging Face Hub rather than the catalog file."""

    @cached_property
    def params(self) -> int:
        """Total parameters, from the architecture."""
        return self.architecture.total_params

    @cached_property
    def active_params(self) -> int:
        """Parameters one token passes through (MoE: the routed experts only)."""
        return self.architecture.active_params

    @property
    def is_moe(self) -> bool:
        """Whether the model routes tokens over experts."""
        return self.architecture.moe is not None


def label_capacity_gb(label_gb: float, napkin: bool = False) -> float:
    """GB (10^9 bytes) a card labelled ``label_gb`` offers: the label read as GiB
    (``CARD_GB_BYTES``), or the label itself under the napkin rules."""
    return label_gb if napkin else label_gb * CARD_GB_BYTES / GB


class GpuSpec(BaseModel):
    """An accelerator with its memory, dense throughput and a typical rental price."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    vendor: Literal["NVIDIA", "AMD", "Intel"]
    aliases: tuple[str, ...] = ()
    compute_capability: float | None = Field(default=None, ge=1.0, le=20.0)
    """NVIDIA's CUDA compute capability (8.0 A100, 9.0 Hopper, 10.0 B200; NVIDIA's "CUDA
    GPUs" table); None for other vendors. Frameworks pick attention kernels by it."""
    memory_gb: float = Field(gt=0)
    """Memory as the vendor labels it ("80 GB"); see ``capacity_gb`` for bytes."""
    bf16_tflops: float | None = Field(default=None, gt=0)
    """Dense (not sparse) BF16 tensor TFLOPs; None when the card has no BF16."""
    fp16_tflops: float = Field(gt=0)
    """Dense FP16 tensor TFLOPs."""
    fp8_tflops: float | None = Field(default=None, gt=0)
    matmul_tflops: float | None = Field(default=None, gt=0)
    """Achievable dense BF16 (FP16 without BF16) matmul TFLOPs on large GEMMs, from
    published matmul benchmarks (``matmul_source``); None: not measured, the time
    model derives it from the rated figure."""
    matmul_source: str = ""
    flash_attention_tflops: float | None = Field(default=None, gt=0)
    """FlashAttention-2's forward+backward TFLOPs where its kernels reach a smaller share
    of the matmul rate than the A100's ``FA_EFFICIENCY``: Hopper and sm_100 Blackwell,
    whose new tensor-core paths (``wgmma``, ``tcgen05``) its Ampere-style ``mma.sync``
    tiles cannot use (about 35% of the H100's dense peak, 15% of the B200's;
    ``flash_attention_source``); None: ``FA_EFFICIENCY`` x the matmul rate."""
    flash_attention_source: str = ""
    hbm_gbps: float | None = Field(default=None, gt=0)
    """Memory bandwidth in GB/s (10^9 bytes/s) from the vendor datasheet."""
    p2p: bool = True
    """Peer-to-peer transfers between cards of one node (NVIDIA's stock driver gives
    GeForce cards none over PCIe: traffic goes through host memory)."""
    link_gbps: float | None = Field(default=None, gt=0)
    """Per-GPU bandwidth between cards of one node in GB/s, one direction (NVLink,
    Infinity Fabric, or the PCIe slot); None: derived from ``fabric``."""
    gpus_per_node: int = Field(default=GPUS_PER_NODE, ge=1, le=MAX_GPUS_PER_NODE)
    """Cards one rented machine holds, which share ``link_gbps``; past it a run spans
    nodes and talks over the network (``gpus_per_node_source`` where not the usual 8)."""
    gpus_per_node_source: str = ""
    max_nodes: int | None = Field(default=None, ge=1, le=MAX_NODES)
    """Machines of this card one run can rent together over a fast network; None: as
    many as the sizer allows. GeForce cards rent as single machines (``max_nodes_source``),
    so a plan past one machine's cards is not offered."""
    max_nodes_source: str = ""
    rent_step: int | None = Field(default=None, ge=1, le=MAX_GPUS_PER_NODE)
    """Cards come only in multiples of this many (GB200: 4-GPU compute trays, the
    smallest slice clouds rent), so a plan's count is rounded up to it; None: any count
    (machines of ``MACHINE_SIZES``, billed as ``engine.fit.rented_cards`` says)."""
    rent_step_source: str = ""
    host_arch: Literal["x86_64", "aarch64"] = "x86_64"
    """The host CPU's architecture: ``aarch64`` on Grace (GH200, GB200), where compiled
    training packages (bitsandbytes, flash-attn) need Arm builds."""
    bf16: bool
    flash_attention_2: Literal["yes", "partial", "no"]
    interconnect: str
    """Human description (``NVLink 4 (SXM5, NVSwitch)``)."""
    fabric: Literal["nvlink", "pcie", "infinity-fabric", "ethernet"]
    """Interconnect class (the link a multi-card run communicates over)."""
    status: Literal["live", "eol"]
    price_per_gpu_hour: float | None = Field(default=None, gt=0)
    price_source: str = ""
    price_as_of: date | None = None
    price_refreshed_at: datetime | None = None
    """When a refreshed price (``catalog.prices.apply_prices``) was fetched; None for the
    built-in price. The report turns it into "refreshed 3 h ago"."""
    spot_price_per_gpu_hour: float | None = Field(default=None, gt=0)
    """USD per GPU-hour at spot (interruptible) rates: the lowest refreshed spot offer
    (``catalog.prices.apply_prices``); None when no source lists one. A request with
    ``spot`` uses it, else the on-demand ``price_per_gpu_hour``."""
    spot_price_source: str = ""
    instances: dict[str, int] = Field(default_factory=dict)
    """Cloud instance types that carry this card, as their clouds write them
    (``p4d.24xlarge``, ``a2-highgpu-8g``, ``Standard_ND96asr_v4``, ``gpu_8x_h100_sxm5``)
    -> cards per instance. A query that names one means that many of this card."""
    instances_source: str = ""
    spec_source: str
    notes: str = ""

    @model_validator(mode="after")
    def _bf16_consistent(self) -> GpuSpec:
        if self.bf16 and self.bf16_tflops is None:
            raise ValueError("bf16 is true but bf16_tflops is missing")
        return self

    @model_validator(mode="after")
    def _instances_hold_cards(self) -> GpuSpec:
        for name, count in self.instances.items():
            if not normalize_name(name):
                raise ValueError(f"instance {name!r}: an empty name")
            if not 1 <= count <= MAX_GPUS_PER_NODE:
                raise ValueError(f"instance {name!r}: {count} cards (1 to {MAX_GPUS_PER_NODE})")
        if self.instances and not self.instances_source:
            raise ValueError("instances need an instances_source")
        return self

    @property
    def capacity_gb(self) -> float:
        """True memory capacity in GB (10^9 bytes): the label is in GiB (``CARD_GB_BYTES``)."""
        return label_capacity_gb(self.memory_gb)

    @property
    def host_cards(self) -> int:
        """Cards one host's CPUs and memory serve (an offloaded optimizer's, the host RAM
        it needs): the node's, at most ``GPUS_PER_NODE`` (an NVL72 "node" of 72 GB200s is
        18 trays with 36 Grace CPUs)."""
        return min(self.gpus_per_node, GPUS_PER_NODE)

    @property
    def train_tflops(self) -> float:
        """Dense BF16 TFLOPs, or dense FP16 on cards without BF16."""
        return self.bf16_tflops if self.bf16 and self.bf16_tflops else self.fp16_tflops


# Llama-architecture shapes used to scale a synthetic model: (params in B, hidden,
# layers). Below Llama 3.2 1B: SmolLM2-135M and -360M (HuggingFaceTB config.json:
# hidden_size 576 / 960, num_hidden_layers 30 / 32, LlamaForCausalLM).
_LLAMA_SHAPES: tuple[tuple[float, int, int], ...] = (
    (0.135, 576, 30),
    (0.36, 960, 32),
    (1.2, 2048, 16),
    (3.2, 3072, 28),
    (8.0, 4096, 32),
    (13.0, 5120, 40),
    (70.6, 8192, 80),
    (405.9, 16384, 126),
)


def synthetic_model(billions: float) -> ModelSpec:
    """A Llama-3-style architecture scaled to ``billions`` parameters.

    Hidden width is interpolated (in log space) between real Llama-architecture sizes
    and rounded to a multiple of 256 (of 128 below 512); the MLP is 3.5x hidden (gated),
    128-wide heads (64-wide below 1,024) with 8 KV heads (or the largest count up to 8
    that divides the heads), Llama 3's 128,256-token vocabulary, the head tied to the
    embeddings below :data:`SYNTHETIC_TIED_BELOW_B`; the layer count is then solved so
    the total lands on the requested size. Raises ValueError outside
    [:data:`SYNTHETIC_MIN_B`, :data:`SYNTHETIC_MAX_B`].
    """
    if not SYNTHETIC_MIN_B <= billions <= SYNTHETIC_MAX_B:
        raise ValueError(f"a synthetic model has {SYNTHETIC_MIN_B:g}B to {SYNTHETIC_MAX_B:g}B "
                         f"parameters, not {billions:g}B")  # fmt: skip
    target = billions * 1e9
    logs = [math.log(p) for p, _, _ in _LLAMA_SHAPES]
    x = min(max(math.log(billions), logs[0]), logs[-1])
    for (_p0, h0, _), (_p1, h1, _), l0, l1 in zip(
        _LLAMA_SHAPES, _LLAMA_SHAPES[1:], logs, logs[1:], strict=False
    ):
        if l0 <= x <= l1:
            t = (x - l0) / (l1 - l0)
            hidden = math.exp(math.log(h0) + t * (math.log(h1) - math.log(h0)))
            break
    step = 256 if hidden >= 512 else 128
    hidden_i = max(step, round(hidden / step) * step)
    heads = max(1, hidden_i // (128 if hidden_i >= 1024 else 64))
    kv = max(d for d in range(1, min(8, heads) + 1) if heads % d == 0)  # groups the heads
    inter = round(3.5 * hidden_i / 256) * 256
    vocab = 128256
    probe = Architecture(
        hidden_size=hidden_i,
        num_layers=1,
        num_heads=heads,
        num_kv_heads=kv,
        intermediate_size=inter,
        vocab_size=vocab,
        tie_embeddings=billions < SYNTHETIC_TIED_BELOW_B,
    )
    per_layer = probe.total_params - probe.embedding_params - hidden_i
    layers = max(1, round((target - probe.embedding_params - hidden_i) / per_layer))
    arch = Architecture(**{**probe.model_dump(), "num_layers": layers})
    label = f"{billions:g}b"
    return ModelSpec(
        id=f"synthetic-{label}",
        name=f"Synthetic {billions:g}B (Llama-style)",
        family="synthetic",
        architecture=arch,
        official_params=target,
        source="scaled from Llama 3 shapes (engine.specs.synthetic_model)",
        synthetic=True,
    )


class UnknownId(KeyError):
    """A model or card id the catalog does not hold (a Hub model dropped from the cache,
    a card a deployment removed, a stored thread from an older catalog). A KeyError, so
    ``id in catalog`` idioms keep working; catch this, not KeyError, around an estimate:
    any other KeyError is a bug to surface."""

    def __init__(self, kind: str, item_id: str) -> None:
        super().__init__(item_id)
        self.kind, self.item_id = kind, item_id

    def __str__(self) -> str:
        return f"the {self.kind} {self.item_id}"


class Catalog:
    """Models and GPUs by id, with alias lookup. Built by ``catalog.loader``."""

    def __init__(self, models: list[ModelSpec], gpus: list[GpuSpec]) -> None:
        self.models: dict[str, ModelSpec] = {m.id: m for m in models}
        self.gpus: dict[str, GpuSpec] = {g.id: g for g in gpus}
        self._model_names: dict[str, str] = {}
        self._gpu_names: dict[str, str] = {}
        self._sizes: dict[str, str] = {}
        self._instances: dict[str, tuple[str, int]] = {}
        for m in models:
            for name in _model_names(m):
                self._model_names.setdefault(normalize_name(name), m.id)
            for size in m.sizes:
                self._sizes[size.lower()] = m.id
        for g in gpus:
            for name in (g.id, g.name, *g.aliases):
                self._gpu_names.setdefault(normalize_name(name), g.id)
            for name, count in g.instances.items():
                for key in _instance_keys(name):
                    if self._instances.setdefault(key, (g.id, count)) != (g.id, count):
                        raise ValueError(f"instance type {name!r} is listed twice")

    def with_models(self, extra: Iterable[ModelSpec]) -> Catalog:
        """This catalog plus ``extra`` models (e.g. read from the Hugging Face Hub).

        A new catalog sharing this one's GPUs; ``self`` is unchanged. On an id or name
        clash the catalog's own entry wins. Returns ``self`` when ``extra`` is empty.
        """
        added = [m for m in extra if m.id not in self.models]
        if not added:
            return self
        out = copy.copy(self)
        out.models = {**self.models, **{m.id: m for m in added}}
        out._model_names = dict(self._model_names)
        out._sizes = dict(self._sizes)
        for m in added:
            for name in _model_names(m):
                out._model_names.setdefault(normalize_name(name), m.id)
            for size in m.sizes:
                out._sizes.setdefault(size.lower(), m.id)
        return out

    # -- models --------------------------------------------------------------
    def model(self, model_id: str) -> ModelSpec:
        """The model with this id; ``synthetic-<N>b`` ids are built on demand."""
        if model_id in self.models:
            return self.models[model_id]
        match = _SYNTHETIC.match(model_id)
        if match and SYNTHETIC_MIN_B <= float(match.group(1)) <= SYNTHETIC_MAX_B:
            return synthetic_model(float(match.group(1)))
        raise UnknownId("model", model_id)

    def find_model(self, text: str) -> str | None:
        """Resolve a name or alias to a model id (None when unknown)."""
        return self._model_names.get(normalize_name(text))

    def model_for_size(self, size: str) -> str | None:
        """The canonical model for a bare size such as ``70b`` (None when none)."""
        return self._sizes.get(size.lower())

    @property
    def sizes(self) -> dict[str, str]:
        """Size words (``8b``) and the model id each resolves to."""
        return dict(self._sizes)

    def model_names(self) -> list[str]:
        """Every name that resolves to a model (ids, names and aliases)."""
        names: list[str] = []
        for m in self.models.values():
            names += [m.id, *m.aliases, *m.stand_ins]
        return names

    # -- GPUs ----------------------------------------------------------------
    def gpu(self, gpu_id: str) -> GpuSpec:
        """The card with id ``gpu_id`` (:class:`UnknownId` if none)."""
        found = self.gpus.get(gpu_id)
        if found is None:
            raise UnknownId("card", gpu_id)
        return found

    def find_gpu(self, text: str) -> str | None:
        """The id of the card ``text`` names (id, name or alias), or None."""
        return self._gpu_names.get(normalize_name(text))

    def find_instance(self, text: str) -> tuple[str, int] | None:
        """The card and the cards per instance of the cloud instance type ``text`` names
        (``p4d.24xlarge`` -> ``("a100-40gb-sxm", 8)``; SageMaker's ``ml.`` prefix and
        Azure's ``Standard_`` may be left out), or None."""
        key = normalize_name(text)
        return self._instances.get(key) or self._instances.get(key.removeprefix("ml."))

    def gpu_names(self) -> list[str]:
        """The ids and aliases of every card, for suggestions and autocomplete."""
        names: list[str] = []
        for g in self.gpus.values():
            names += [g.id, *g.aliases]
        return names


def _instance_keys(name: str) -> list[str]:
    """The normalized names an instance type is found by: as written, and Azure's without
    its ``Standard_`` prefix (people write ``ND96asr_v4``)."""
    key = normalize_name(name)
    return [key, key.removeprefix("standard")] if key.startswith("standard") else [key]


def gpus_of_memory(gpus: list[GpuSpec], memory_gb: float) -> list[GpuSpec]:
    """The cards a question that names a card by its memory (``24gb``) chooses from: those
    of that memory (GB = 10^9 bytes, as labelled), else those of less (the user's card is
    no bigger), else every card."""
    same = [g for g in gpus if round(g.memory_gb) == round(memory_gb)]
    return same or [g for g in gpus if g.memory_gb < memory_gb] or gpus
