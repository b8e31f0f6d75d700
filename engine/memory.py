"""Training memory: the seven components, whole-model and per GPU.

All figures are GB (10^9 bytes). The seven components, after the detailed
calculator this product was specified from:

``base_weights``
    The model at its base precision (``PRECISION_BYTES``). QLoRA stores the
    decoder's linear layers in NF4 at 4.127 bits/param with double quantization
    (4.5 without) and keeps embeddings, LM head and norms in BF16, as
    bitsandbytes does [QLoRA §2].
``master_weights``
    Full fine-tuning with FP32 states only: an FP32 copy of every weight the
    optimizer updates (none when the base is already FP32 or in ``pure-bf16``).
``gradients``
    One per trainable parameter: the weights' precision for a full fine-tune
    (:func:`full_gradient_bytes`), the adapters' own for LoRA (:func:`lora_adapter_bytes`);
    plus DeepSpeed ZeRO's FP32 partition (``hf``).
``optimizer``
    ``OPTIMIZER_BYTES`` per trainable parameter (AdamW 8, 8-bit AdamW 2, SGD 0,
    Lion 4, Adafactor's factored second moment ~0.06), plus what an unfused AdamW
    step's temporary adds to the peak (below).
``adapter``
    LoRA/QLoRA only: rank·(d_in + d_out) per targeted linear (per expert for
    MoE), 4 bytes each (2 in ``pure-bf16`` with 16-bit adapters).
``activations``
    What one micro-batch keeps for backward (:mod:`engine.activations`), plus the
    autocast casts and QLoRA's dequantized copy that are alive beside it.
``overhead``
    1.5 GB flat per GPU for the CUDA context and framework buffers.

ZeRO (Rajbhandari et al. 2020, arXiv:1910.02054): stage 1 shards optimizer
state and master weights across N GPUs, stage 2 adds gradients, stage 3 adds the
weights plus, on every GPU, the gathered parameters of the largest layer, twice
(``ZERO3_GATHERED_UNITS``): FSDP and ZeRO-3 prefetch the next unit while one
computes (FSDP ``BackwardPrefetch.BACKWARD_PRE`` "holds the current set and the
next set of parameters"); a full fine-tune also holds one unit's unsharded
gradient until it is reduce-scattered. CPU
offload moves optimizer state and master weights to host memory (ZeRO-Offload,
arXiv:2101.06840); under ZeRO-3 the sharded weights and their gradients too,
leaving the gathered layer on the GPU (as FSDP's ``CPUOffload(offload_params=True)``
does: "gradients are also offloaded to CPU", torch.distributed.fsdp docs).

``hsdp`` (FSDP's ``HYBRID_SHARD``) shards as ``fsdp`` does over the data-parallel
ranks of one shard group (``engine.collectives.hsdp_group``: a node of the card's
``gpus_per_node``, put in by :meth:`Footprint.on_card`, or the cards over the nodes the
request names) and replicates that across groups, so more nodes add speed but no memory
relief (:meth:`Footprint.shard_ranks`).

``fsdp`` is ZeRO-3's sharding, with one addition for LoRA (not QLoRA, whose 4-bit
base FSDP wraps apart from the adapters) where the framework's FSDP has it
(``Profile.fsdp_frozen_grads``, LitGPT's): FSDP1 with ``use_orig_params=True``
flattens the frozen base and the trainable adapters of a layer into one parameter,
and then "the gradient memory usage will be higher than expected (namely,
equivalent to not freezing those parameters)" (torch.distributed.fsdp docs, on
freezing parameters). So every GPU also holds the base's gradient, sharded, plus
one unit's unsharded. accelerate+PEFT wrap the adapters as their own units and FSDP2
shards per parameter, so theirs hold none.

Gradient accumulation (``grad_accum`` above 1) changes memory only under ``fsdp``:
FSDP accumulates inside ``no_sync()``, which Lightning Fabric's ``no_backward_sync``
and Accelerate's ``accumulate`` use, and then "FSDP will accumulate the full model
gradients (instead of gradient shards) until the eventual sync" (torch.distributed.fsdp
docs, ``no_sync``). So every GPU holds the whole, unsharded gradient of every unit
with a trainable parameter, frozen base included for LoRA. DeepSpeed ZeRO-2/3
accumulate into the partitioned gradients and need nothing extra. litgpt's 2-GPU
LoRA run (128 accumulation steps) shows it: 22.2 GB per GPU, more than its 1-GPU run
(benchmarks/measurements.yaml, lg-rt-27).

The optimizer step is a second peak. ``torch.optim.AdamW`` without ``fused=True`` runs
``torch.optim.adam._multi_tensor_adam``: ``exp_avg_sq_sqrt =
torch._foreach_sqrt(device_exp_avg_sqs)`` allocates one temporary the size of a moment
for every parameter of the group at once, then divides, adds eps and
``_foreach_addcdiv_`` into the weights. By then the activations are freed, so the step's
peak is weights, gradients, states and that temporary (``Footprint.step_workspace``),
and the peak of the run the larger of the two (:meth:`Footprint.per_gpu`). It matters
for a full fine-tune with small activations (checkpointing, short sequences). Which
frameworks step unfused is a profile fact (``PROFILE_FOREACH_ADAMW``); DeepSpeed ZeRO
steps with its fused Adam, and an offloaded optimizer steps on the host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace

from engine.activations import (
    activation_bytes,
    autocast_copy_bytes,
    dequant_workspace_bytes,
    dora_workspace_bytes,
)
from engine.architecture import Architecture
from engine.choices import Method, Mode, Optimizer, Sharding, StatePrecision
from engine.collectives import hsdp_group, named_node_cards
from engine.constants import (
    ADAPTER_BYTES,
    GB,
    GPUS_PER_NODE,
    MASTER_WEIGHT_BYTES,
    NAPKIN_BASE_BYTES,
    NAPKIN_BYTES_PER_PARAM,
    NAPKIN_FULL_SPLIT,
    OPTIMIZER_BYTES,
    OPTIMIZER_BYTES_PURE_BF16,
    OVERHEAD_GB,
    PRECISION_BYTES,
    ZERO3_GATHERED_UNITS,
)
from engine.fsdp_units import fsdp1_units
from engine.profiles import fp32_residual_stream, profile, trained_architecture
from engine.records import record
from engine.request import Request
from engine.weight_bytes import (
    base_weight_bytes,
    full_gradient_bytes,
    gathered_unit_bytes,
    lora_adapter_bytes,
)

COMPONENTS: tuple[str, ...] = (
    "base_weights",
    "master_weights",
    "gradients",
    "optimizer",
    "adapter",
    "activations",
    "overhead",
)
"""The seven components, in display order."""


@record
class Breakdown:
    """Memory on one GPU, by component, in GB."""

    base_weights: float
    master_weights: float
    gradients: float
    optimizer: float
    adapter: float
    activations: float
    overhead: float

    @property
    def total(self) -> float:
        """The seven components' sum, GB."""
        return (
            self.base_weights
            + self.master_weights
            + self.gradients
            + self.optimizer
            + self.adapter
            + self.activations
            + self.overhead
        )

    def as_dict(self) -> dict[str, float]:
        """Each component by name, GB."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@record
class Footprint(Breakdown):
    """Whole-run memory before it is spread over GPUs, in GB.

    The seven components (and ``total``) as in :class:`Breakdown`, for the whole
    run. ``gathered`` is the largest layer's weights, which ZeRO-3 materializes on
    every GPU, and ``gathered_grad`` that layer's unsharded gradient (full
    fine-tunes). In napkin mode every component divides evenly over the cards and
    nothing is fixed per GPU.
    """

    gathered: float = 0.0
    gathered_grad: float = 0.0
    frozen_grad: float = 0.0
    """Gradients FSDP1 keeps for frozen base weights that share a wrapped unit with
    trainable adapters (LoRA under ``fsdp``): the base's size in its precision."""
    frozen_grad_unit: float = 0.0
    """The largest unit's share of :attr:`frozen_grad`, held unsharded until it is
    reduce-scattered."""
    root_unit: float = 0.0
    """FSDP1's root unit (embeddings, LM head, final norm), gathered from the forward to
    the end of the backward where the framework has it (``Profile.fsdp_root_unit``); its
    gradient (:attr:`root_grad`) as long; the units around it are decoder layers
    (:attr:`layer_unit`). 0 otherwise."""
    root_grad: float = 0.0
    layer_unit: float = 0.0
    accumulates: bool = False
    """Gradient accumulation is on: under ``fsdp`` the gradients stay unsharded."""
    zero_fp32_grads: float = 0.0
    """FP32 gradients DeepSpeed's ZeRO (stage 1-3) keeps in its optimizer partition,
    sharded and offloaded with the optimizer state (``PROFILE_DEEPSPEED_ZERO``); shown
    under gradients."""
    sharded_activations: float = 0.0
    """The activations on cards that shard the weights, where they differ (``auto``
    sharding of ``hf`` QLoRA, whose FP32 stream only an unsharded run has); 0 else."""
    offload_weights: bool = True
    """Under ``offload`` with ZeRO-3/FSDP, the weight shards live in host memory too
    (``Request.offload_weights``); else only the optimizer does."""
    offloads_gradients: bool = False
    """Under ``offload`` on unsharded weights, the gradients stream to host memory as
    backward produces them (ZeRO-Offload; ``PROFILE_OFFLOAD_GRADIENTS``), leaving about
    one layer's on the GPU."""
    always_shards: bool = False
    """The framework's multi-card recipes always shard with FSDP (``Profile.always_shards``):
    ``auto`` on several data-parallel ranks is ``fsdp``, never DDP replicas."""
    step_workspace: float = 0.0
    """The temporary an unfused (foreach) AdamW step allocates, one moment's size per
    trainable parameter (see the module docstring); 0 for a fused step."""
    napkin: bool = False
    tensor_parallel: int = 1
    """Cards every layer is split over (``Request.tensor_parallel``). The components
    above are then one such card's share, and data-parallel sharding runs over
    ``count / tensor_parallel`` groups (:meth:`data_parallel`)."""
    node_cards: int = GPUS_PER_NODE
    """Cards in one node: ``GPUS_PER_NODE`` until :meth:`on_card` puts in the card's own
    ``gpus_per_node``; the request's cards over its nodes where it names both."""
    nodes: int | None = None
    """The nodes the request names: ``hsdp``'s shard group is then the run's cards over
    them on every card (its mesh, whatever machines hold it; ``hsdp_group``)."""
    context_parallel: int = 1
    """Data-parallel ranks that split each sequence (``Request.context_parallel``): the
    activations above are one rank's share, and counts of ranks are whole multiples."""

    def on_card(self, gpus_per_node: int) -> Footprint:
        """This footprint on a card whose machines hold ``gpus_per_node`` cards: ``hsdp``
        shards within one such node unless the request named its nodes."""
        if self.nodes or self.node_cards == gpus_per_node:
            return self
        return replace(self, node_cards=gpus_per_node)

    @property
    def card_step(self) -> int:
        """Cards come in whole multiples of this: a tensor-parallel group per rank, a
        context-parallel ring of ranks."""
        return self.tensor_parallel * self.context_parallel

    def data_parallel(self, count: int) -> int:
        """Data-parallel ranks among ``count`` cards: one per tensor-parallel group."""
        return max(1, count // self.tensor_parallel)

    def shard_ranks(self, stage: Sharding, count: int) -> int:
        """Ranks the sharded state is spread over among ``count`` cards: every
        data-parallel rank, or under ``hsdp`` one shard group's (``hsdp_group``: the run
        split evenly over its nodes; replicas across them)."""
        ranks = self.data_parallel(count)
        if stage is not Sharding.HSDP:
            return ranks
        group = hsdp_group(count, self.node_cards, self.nodes)
        return min(ranks, max(1, group // self.tensor_parallel))

    @property
    def whole_gradients(self) -> float:
        """Every gradient FSDP holds unsharded while it accumulates (frozen base
        included for LoRA), GB."""
        return self.gradients + self.frozen_grad

    def per_gpu(self, stage: Sharding, count: int, offload: bool = False) -> Breakdown:
        """Memory on each of ``count`` GPUs under ZeRO ``stage`` (``none``: replicas), at
        the run's peak: the backward pass (:meth:`during_backward`), or the optimizer step
        (:meth:`at_step`) where that is higher, its excess shown with the optimizer.

        ``count`` is every card of the run; under tensor parallelism the sharding runs
        over :meth:`data_parallel` of them. ``auto`` must be resolved by the caller (see
        ``engine.fit.resolve_stage``).
        """
        if stage is Sharding.HSDP:
            ranks = self.shard_ranks(stage, count)
        else:  # shard_ranks, inlined: card sizing calls this tens of times per estimate
            ranks = count // self.tensor_parallel if self.tensor_parallel > 1 else count
        if ranks < 1:
            ranks = 1
        during = self.during_backward(stage, ranks, offload)
        excess = self.at_step(stage, ranks, offload) - during.total
        if excess <= 0:
            return during
        return replace(during, optimizer=during.optimizer + excess)

    def at_step(self, stage: Sharding, count: int, offload: bool = False) -> float:
        """Per-GPU GB during an unfused AdamW step on ``count`` data-parallel ranks (every
        card without tensor parallelism); 0 when the step allocates nothing
        (a fused step, DeepSpeed ZeRO's own Adam, or the host's under offload).

        Activations are freed and FSDP has gathered nothing: weights, master weights,
        gradients (reduce-scattered), states and adapters, sharded under ``fsdp``, the
        step's temporary beside them, and the fixed overhead.
        """
        if not self.step_workspace or offload or stage.is_zero or self.napkin:
            return 0.0
        fsdp = stage.is_fsdp
        shards = max(count, 1) if fsdp else 1
        held = (
            self.base_weights
            + self.master_weights
            + self.gradients
            + (self.frozen_grad if fsdp else 0.0)
            + self.optimizer
            + self.adapter
            + self.step_workspace
        )
        return held / shards + self.overhead

    def during_backward(self, stage: Sharding, count: int, offload: bool = False) -> Breakdown:
        """Memory on each GPU of ``count`` data-parallel ranks (every card without tensor
        parallelism) while one micro-batch's backward runs: the activations, the gathered
        units and the gradients as they build up."""
        n = max(count, 1)
        if self.napkin:
            return Breakdown(
                self.base_weights / n,
                self.master_weights / n,
                self.gradients / n,
                self.optimizer / n,
                self.adapter / n,
                0.0,
                0.0,
            )
        # What each stage shards, as ZeRO numbers them: 1 the optimizer states (and master
        # weights), 2 the gradients too, 3 the weights too (ZeRO-3, FSDP, HSDP).
        shards_weights = stage.shards_weights
        shards_states = stage.is_zero or stage.is_fsdp
        shards_grads = shards_weights or stage is Sharding.ZERO2
        activations = self.activations
        if shards_weights and self.sharded_activations:
            activations = self.sharded_activations
        optimizer = 0.0 if offload else (
            self.optimizer / n if shards_states else self.optimizer
        )
        master = 0.0 if offload else (
            self.master_weights / n if shards_states else self.master_weights
        )
        gradients = self.gradients / n if shards_grads else self.gradients
        if shards_weights and (n > 1 or offload):
            # The unit being computed and the prefetched next one are gathered in full;
            # a full fine-tune also holds one unit's unsharded gradient before reduce-scatter.
            gathered = ZERO3_GATHERED_UNITS * self.gathered
            on_host = offload and self.offload_weights
            # FSDP's CPU offload moves the adapters' shards to the host too (DeepSpeed
            # keeps small parameters on the GPU: its persistence threshold).
            adapter = 0.0 if on_host and stage.is_fsdp else self.adapter / n
            unit_grad = self.gathered_grad
            if stage.is_fsdp and self.root_unit and n > 1:  # one rank: NO_SHARD
                gathered = self.root_unit + ZERO3_GATHERED_UNITS * self.layer_unit
                unit_grad = self.root_grad + (self.layer_unit / self.gathered) * unit_grad
            frozen = 0.0
            if stage.is_fsdp:
                unit_grad += self.frozen_grad_unit
                frozen = self.frozen_grad / n
            weights = gathered if on_host else self.base_weights / n + gathered
            if stage.is_fsdp and self.accumulates:
                # no_sync(): every unit's whole gradient stays on the GPU until the sync
                # step, with or without CPU offload.
                gradients = self.whole_gradients
            elif offload:
                # FSDP's CPU offload keeps sharded parameters and their gradients on the host.
                gradients = unit_grad
            else:
                gradients = gradients + frozen + unit_grad
        else:
            weights, adapter = self.base_weights, self.adapter
            if offload and self.offloads_gradients and self.gathered_grad:
                # ZeRO-Offload copies each reduced bucket to the host during backward.
                gradients = min(gradients, self.gathered_grad)
        if stage.is_zero and not offload:  # DeepSpeed's FP32 gradient partition
            gradients += self.zero_fp32_grads / n
        return Breakdown(
            weights, master, gradients, optimizer, adapter, activations, self.overhead
        )

    def split(self, stage: Sharding, offload: bool = False) -> tuple[tuple[float, float], ...]:
        """``(fixed, sharded)`` GB lines such that per-GPU memory on N > 1 data-parallel
        ranks is the largest ``fixed + sharded / N``: one for the backward pass, one for an
        unfused optimizer step when it has a temporary."""
        phases: list[Callable[[int], float]] = [
            lambda n: self.during_backward(stage, n, offload).total
        ]
        if self.at_step(stage, 2, offload):
            phases.append(lambda n: self.at_step(stage, n, offload))
        lines = []
        for total in phases:
            one, two = total(1 << 40), total(2)
            lines.append((one, max(0.0, (two - one) * 2)))
        return tuple(lines)

    def offloaded_gb(self, stage: Sharding) -> float:
        """Host (CPU) memory the offloaded state needs, summed over all GPUs."""
        host = self.optimizer + self.master_weights
        if stage.is_zero:
            host += self.zero_fp32_grads
        elif self.offloads_gradients and not stage.shards_weights:
            host += self.gradients
        if stage.shards_weights:
            host += self.gradients + (self.base_weights if self.offload_weights else 0.0)
        if stage.is_fsdp:
            host += self.frozen_grad + (self.adapter if self.offload_weights else 0.0)
        return host


def footprint(arch: Architecture, request: Request) -> Footprint:
    """Whole-run memory of ``request`` on ``arch``, before sharding (GB)."""
    arch = trained_architecture(arch, request)
    method = request.effective_method
    if request.mode is Mode.NAPKIN:
        return _with_nodes(_napkin_footprint(arch, method), request)
    pure = request.state_precision is StatePrecision.PURE_BF16
    params = arch.total_params
    opt_table = OPTIMIZER_BYTES_PURE_BF16 if pure else OPTIMIZER_BYTES
    opt_per_param = opt_table[request.optimizer.value]
    base = base_weight_bytes(arch, request)
    frozen_grads = method is Method.LORA and profile(request.framework).fsdp_frozen_grads
    if method is Method.FULL:
        precision = request.precision.value
        master = 0.0 if pure or precision == "fp32" else MASTER_WEIGHT_BYTES * params
        grad_bytes = full_gradient_bytes(request)
        gradients = grad_bytes * params
        if request.optimizer_in_backward:
            # Stepped and freed as soon as ready: about one layer's gradients at a time.
            gradients = grad_bytes * arch.largest_layer_params
        optimizer = opt_per_param * params
        trainable = params
        adapter = 0.0
        gathered_bytes = PRECISION_BYTES[precision]
    else:
        grad_bytes = 0.0
        lora = arch.lora_params(request.lora_rank, request.lora_targets.value)
        if request.dora:  # and its magnitude vectors, trained alike
            lora += arch.lora_magnitudes(request.lora_targets.value)
        trainable = lora
        adapter_bytes = lora_adapter_bytes(request)
        if adapter_bytes == ADAPTER_BYTES:  # FP32 adapters: the optimizer's moments too
            opt_per_param = OPTIMIZER_BYTES[request.optimizer.value]
        master = 0.0
        gradients = adapter_bytes * lora
        optimizer = opt_per_param * lora
        adapter = adapter_bytes * lora
        gathered_bytes = base / params
    root_unit, layer_unit = fsdp1_units(arch, request, base, gathered_bytes)
    whole = Footprint(
        base_weights=base / GB,
        master_weights=master / GB,
        gradients=gradients / GB,
        optimizer=optimizer / GB,
        adapter=adapter / GB,
        activations=_activation_bytes(arch, request) / GB,
        sharded_activations=_sharded_activation_bytes(arch, request) / GB,
        overhead=OVERHEAD_GB,
        gathered=gathered_unit_bytes(arch, request, gathered_bytes) / GB,
        gathered_grad=arch.largest_layer_params * grad_bytes / GB if method is Method.FULL else 0.0,
        frozen_grad=base / GB if frozen_grads else 0.0,
        root_unit=root_unit / GB,
        root_grad=root_unit / gathered_bytes * grad_bytes / GB,  # 0 unless full
        layer_unit=layer_unit / GB,
        frozen_grad_unit=arch.largest_layer_params * gathered_bytes / GB if frozen_grads else 0.0,
        accumulates=(
            request.grad_accum > 1 and profile(request.framework).fsdp_accumulates_unsharded
        ),
        zero_fp32_grads=(
            MASTER_WEIGHT_BYTES * trainable / GB
            if profile(request.framework).deepspeed_zero and not pure
            else 0.0
        ),
        step_workspace=_step_workspace(request, trainable, opt_per_param) / GB,
        offloads_gradients=profile(request.framework).offload_gradients,
        offload_weights=request.offload_weights,
        always_shards=profile(request.framework).always_shards,
    )
    whole = _with_nodes(whole, request)
    if request.context_parallel > 1:
        whole = replace(whole, context_parallel=request.context_parallel)
    return tensor_parallel_share(whole, request.tensor_parallel)


def _with_nodes(fp: Footprint, request: Request) -> Footprint:
    """``fp`` with the nodes ``request`` names (``hsdp``'s groups on every card)."""
    if not request.nodes:
        return fp
    cards = named_node_cards(request) or fp.node_cards
    return replace(fp, node_cards=cards, nodes=request.nodes)


def tensor_parallel_share(fp: Footprint, degree: int) -> Footprint:
    """One card's share of ``fp`` when every layer is split over ``degree`` cards.

    Megatron-style tensor parallelism splits each linear's weight (and its gradient,
    optimizer state and adapters) over the group (Shoeybi et al. 2019, arXiv:1909.08053,
    §3); with sequence parallelism the norms' and dropouts' activations are split along
    the sequence too, so every stored activation is divided by the degree (Korthikanti
    et al. 2022, arXiv:2205.05198, §4.2.2, Table 2: ``sbh(34/t + 5as/(ht))``), and a
    vocabulary-parallel loss splits the logits (torchtitan's loss parallel). Only the
    fixed overhead stays whole. Embeddings and norms are counted as split too: torchtitan
    shards the embedding and output over the group; the replicated norm weights are a
    few MB.
    """
    if degree <= 1 or fp.napkin:
        return fp
    split = {
        f.name: getattr(fp, f.name) / degree
        for f in fields(fp)
        if isinstance(getattr(fp, f.name), float) and f.name != "overhead"
    }
    return replace(fp, **split, tensor_parallel=degree)


def _activation_bytes(arch: Architecture, request: Request) -> float:
    """Activations plus the autocast casts and QLoRA's dequantized copy beside them.

    Under context parallelism each card stores the activations of its ``seq_len / cp``
    tokens (ring attention keeps no score matrix: FlashAttention's saved output and
    log-sum-exp are per query); the casts and the dequantized copy are weight-sized."""
    local = request
    if request.context_parallel > 1:
        shard = -(-request.seq_len // request.context_parallel)
        local = request.model_copy(update={"seq_len": shard})
    return (
        activation_bytes(arch, local)
        + autocast_copy_bytes(arch, request)
        + dequant_workspace_bytes(arch, request)
        + dora_workspace_bytes(arch, request)
    )


def _sharded_activation_bytes(arch: Architecture, request: Request) -> float:
    """The activations on cards that shard the weights, where they differ from the
    request's own: ``auto`` sharding with an FP32 residual stream on one card, which
    several cards (ZeRO-3) do not prepare (``engine.profiles.fp32_residual_stream``).
    0 where they are the same."""
    if request.sharding is not Sharding.AUTO or not fp32_residual_stream(request):
        return 0.0
    return _activation_bytes(arch, request.model_copy(update={"sharding": Sharding.ZERO3}))


def _step_workspace(request: Request, trainable: float, opt_per_param: float) -> float:
    """Bytes of the temporary an unfused AdamW step allocates (``torch._foreach_sqrt`` of
    the second moments): one moment, half of AdamW's state bytes, per trainable
    parameter. 0 for a fused step, another optimizer, or a step run per parameter
    inside backward."""
    unfused = profile(request.framework).foreach_adamw and request.optimizer is Optimizer.ADAMW
    if not unfused or (request.effective_method is Method.FULL and request.optimizer_in_backward):
        return 0.0
    return opt_per_param / 2 * trainable


def _napkin_footprint(arch: Architecture, method: Method) -> Footprint:
    """The napkin rule: 16 / 2.5 / 0.75 bytes per parameter and nothing else.

    The flat figure is shown in the same seven slots (:data:`NAPKIN_FULL_SPLIT`: full =
    2 weights + 4 master + 2 gradients + 8 optimizer; :data:`NAPKIN_BASE_BYTES`: LoRA = 2
    weights + 0.5 for adapters and their training state, QLoRA = 0.5 + 0.25).
    """
    p = arch.total_params / GB
    if method is Method.FULL:
        full = NAPKIN_FULL_SPLIT
        return Footprint(
            base_weights=full["base_weights"] * p, master_weights=full["master_weights"] * p,
            gradients=full["gradients"] * p, optimizer=full["optimizer"] * p,
            adapter=0.0, activations=0.0, overhead=0.0, napkin=True,
        )  # fmt: skip
    weights = NAPKIN_BASE_BYTES[method.value]
    adapter = (NAPKIN_BYTES_PER_PARAM[method.value] - weights) * p
    return Footprint(base_weights=weights * p, master_weights=0.0, gradients=0.0,
                     optimizer=0.0, adapter=adapter, activations=0.0, overhead=0.0,
                     napkin=True)  # fmt: skip
