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
    One per trainable parameter: base precision for a full fine-tune, FP32 for
    LoRA adapters (PEFT keeps adapters in FP32); BF16 in ``pure-bf16``.
``optimizer``
    ``OPTIMIZER_BYTES`` per trainable parameter (AdamW 8, 8-bit AdamW 2, SGD 0,
    Lion 4, Adafactor's factored second moment ~0.06).
``adapter``
    LoRA/QLoRA only: rank·(d_in + d_out) per targeted linear (per expert for
    MoE), 4 bytes each (2 in ``pure-bf16``).
``activations``
    See :func:`activation_bytes`.
``overhead``
    1.5 GB flat per GPU for the CUDA context and framework buffers.

Activations (re-derived from Korthikanti et al. 2022, §4.1)
----------------------------------------------------------
Korthikanti et al. count, for one GPT layer in 16-bit with dropout, multi-head
attention and a 4h MLP, ``s·b·h·(34 + 5·a·s/h)`` bytes. Re-deriving the same
bookkeeping for the catalog's architectures (no dropout, pre-norm, grouped-query
attention with query width ``q = heads·head_dim`` and key/value width
``kv = kv_heads·head_dim``, gated MLP of width ``I``) gives, per token per layer:

* attention block: norm input ``2h``, Q/K/V projection input ``2h``, Q ``2q``,
  K and V ``2·2kv``, output-projection input ``2q``: ``4h + 4q + 4kv`` bytes;
* attention scores without FlashAttention: the softmax output, ``2·a·s`` bytes
  per token (Korthikanti's ``5as`` minus the dropout mask and output); with
  FlashAttention only the FP32 log-sum-exp per head remains (``4a``);
* gated MLP: norm input ``2h``, gate/up input ``2h``, gate output, SiLU output,
  up output and down-projection input, ``4·2I``: ``4h + 8I`` (plain MLP:
  ``4h + 4I``);
* norms beyond the two pre-norms (Gemma 2/3 also normalize each block's output):
  their input, ``2h`` each;
* LoRA dropout above 0: for each adapted linear, a bool mask and the dropped-out
  16-bit input, ``3·d_in`` (``LORA_DROPOUT_BYTES``).

So a dense gated layer with two norms stores ``s·b·(8h + 4q + 4kv + 8I)`` bytes
plus the scores term; for Llama 3.1 8B at batch 1 and sequence 2048 that is 11.0 GB
over 32 layers. For MoE layers ``I`` is the width a token passes through
(k routed experts plus shared experts).

That is the specification's count, which ``generic`` keeps. The real frameworks keep
what PyTorch's autograd keeps (:func:`saved_inputs`, ``PROFILE_SPEC_ACTIVATIONS``): a
frozen linear keeps no input unless a dropout-free adapter or bitsandbytes' 4-bit matmul
does; under checkpointing the logits and the recomputed layer peak apart; FP32 weights
under BF16 autocast keep a BF16 cast of each weight (:func:`autocast_copy_bytes`).

Gradient checkpointing keeps each layer's input (``2·s·b·h`` per layer) plus one
layer's full activations while that layer is recomputed. The logits,
``b·s·vocab`` upcast to FP32 for the loss, come on top unless a fused
cross-entropy kernel (Liger, Unsloth) avoids materializing them. Hugging Face
transformers' unfused path keeps more copies at once (``hf-loss``: 12 B per logit,
sourced at ``engine.constants.LOGITS_BYTES_HF``).

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

``fsdp`` is ZeRO-3's sharding with one addition for LoRA (not QLoRA, whose 4-bit
base FSDP wraps apart from the adapters): FSDP1 with ``use_orig_params=True``
flattens the frozen base and the trainable adapters of a layer into one parameter,
and then "the gradient memory usage will be higher than expected (namely,
equivalent to not freezing those parameters)" (torch.distributed.fsdp docs, on
freezing parameters). So every GPU also holds the base's gradient, sharded, plus
one unit's unsharded.

Gradient accumulation (``grad_accum`` above 1) changes memory only under ``fsdp``:
FSDP accumulates inside ``no_sync()``, which Lightning Fabric's ``no_backward_sync``
and Accelerate's ``accumulate`` use, and then "FSDP will accumulate the full model
gradients (instead of gradient shards) until the eventual sync" (torch.distributed.fsdp
docs, ``no_sync``). So every GPU holds the whole, unsharded gradient of every unit
with a trainable parameter, frozen base included for LoRA. DeepSpeed ZeRO-2/3
accumulate into the partitioned gradients and need nothing extra. litgpt's 2-GPU
LoRA run (128 accumulation steps) shows it: 22.2 GB per GPU, more than its 1-GPU run
(benchmarks/measurements.yaml, lg-rt-27).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from engine.architecture import Architecture
from engine.constants import (
    ACTIVATION_BYTES,
    ADAPTER_BYTES,
    FP32_BYTES,
    GB,
    LOGITS_BYTES_HF,
    LORA_DROPOUT_BYTES,
    MASTER_WEIGHT_BYTES,
    NAPKIN_BYTES_PER_PARAM,
    NF4_BITS,
    NF4_BITS_DOUBLE_QUANT,
    OFFLOADED_INPUTS_IN_FLIGHT,
    OPTIMIZER_BYTES,
    OPTIMIZER_BYTES_PURE_BF16,
    OVERHEAD_GB,
    PRECISION_BYTES,
    ZERO3_GATHERED_UNITS,
)
from engine.profiles import logits_bytes, profile
from engine.request import (
    LoraTargets,
    Method,
    Mode,
    Precision,
    Request,
    Sharding,
    StatePrecision,
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


@dataclass(frozen=True, slots=True)
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
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
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
    accumulates: bool = False
    """Gradient accumulation is on: under ``fsdp`` the gradients stay unsharded."""
    zero_fp32_grads: float = 0.0
    """FP32 gradients DeepSpeed's ZeRO (stage 1-3) keeps in its optimizer partition,
    sharded and offloaded with the optimizer state (``PROFILE_ZERO_FP32_GRADS``)."""
    napkin: bool = False

    @property
    def whole_gradients(self) -> float:
        """Every gradient FSDP holds unsharded while it accumulates (frozen base
        included for LoRA), GB."""
        return self.gradients + self.frozen_grad

    def per_gpu(self, stage: Sharding, count: int, offload: bool = False) -> Breakdown:
        """Memory on each of ``count`` GPUs under ZeRO ``stage`` (``none``: replicas).

        ``auto`` must be resolved by the caller (see ``engine.fit.resolve_stage``).
        """
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
        s3 = stage.shards_weights
        s1 = s3 or stage in (Sharding.ZERO1, Sharding.ZERO2)
        s2 = s3 or stage is Sharding.ZERO2
        optimizer = 0.0 if offload else (self.optimizer / n if s1 else self.optimizer)
        if s1 and stage is not Sharding.FSDP and not offload:
            optimizer += self.zero_fp32_grads / n
        master = 0.0 if offload else (self.master_weights / n if s1 else self.master_weights)
        gradients = self.gradients / n if s2 else self.gradients
        if s3 and (n > 1 or offload):
            # The unit being computed and the prefetched next one are gathered in full;
            # a full fine-tune also holds one unit's unsharded gradient before reduce-scatter.
            gathered = ZERO3_GATHERED_UNITS * self.gathered
            adapter = self.adapter / n
            unit_grad = self.gathered_grad
            frozen = 0.0
            if stage is Sharding.FSDP:
                unit_grad += self.frozen_grad_unit
                frozen = self.frozen_grad / n
            weights = gathered if offload else self.base_weights / n + gathered
            if stage is Sharding.FSDP and self.accumulates:
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
        return Breakdown(
            weights, master, gradients, optimizer, adapter, self.activations, self.overhead
        )

    def split(self, stage: Sharding, offload: bool = False) -> tuple[float, float]:
        """``(fixed, sharded)`` GB such that per-GPU memory = fixed + sharded / N (N > 1)."""
        one = self.per_gpu(stage, 1 << 40, offload).total
        two = self.per_gpu(stage, 2, offload).total
        sharded = max(0.0, (two - one) * 2)
        return one, sharded

    def offloaded_gb(self, stage: Sharding) -> float:
        """Host (CPU) memory the offloaded state needs, summed over all GPUs."""
        host = self.optimizer + self.master_weights
        if stage in (Sharding.ZERO1, Sharding.ZERO2, Sharding.ZERO3):
            host += self.zero_fp32_grads
        if stage.shards_weights:
            host += self.base_weights + self.gradients
        if stage is Sharding.FSDP:
            host += self.frozen_grad
        return host


def base_weight_bytes(arch: Architecture, request: Request) -> float:
    """Bytes of the frozen or trained base model as stored on the GPU.

    QLoRA: linear layers at 4.127 bits/param (4.5 without double quantization),
    everything else (embeddings, LM head, norms) in BF16 [QLoRA §2, detailed doc].
    """
    if request.effective_method is Method.QLORA:
        bits = NF4_BITS_DOUBLE_QUANT if request.double_quant else NF4_BITS
        rest = arch.total_params - arch.linear_params
        return arch.linear_params * bits / 8 + rest * PRECISION_BYTES["bf16"]
    return arch.total_params * PRECISION_BYTES[request.precision.value]


@dataclass(frozen=True, slots=True)
class SavedInputs:
    """Which linear-layer inputs a layer keeps for backward, beyond what attention,
    the norms and the MLP's activation function keep anyway.

    A linear needs its input in backward only for its weight's gradient. PyTorch's
    autograd saves a matmul operand only when the derivative that uses it will be
    computed (``guard_for`` in ``tools/autograd/gen_variable_type.py``), so a frozen
    BF16 linear keeps nothing; a LoRA adapter without dropout keeps the same input for
    its ``A`` matrix; bitsandbytes' ``MatMul4Bit`` keeps its input whenever any operand
    needs a gradient (``ctx.tensors = (A, B)``), so QLoRA through bitsandbytes keeps
    every quantized linear's input; torchao's ``LinearNF4`` keeps only the weight.
    """

    attention: bool
    """The Q/K/V projections' input (the first norm's output), ``2h`` bytes a token."""
    mlp: bool
    """The gate/up projections' input (the second norm's output), ``2h``."""
    down: bool
    """The down projection's input (the activation times up), ``2I``."""
    output: bool = True
    """The output projection's input: attention's output made contiguous, ``2q``, a
    tensor apart from the output FlashAttention keeps for its own backward."""


ALL_SAVED = SavedInputs(True, True, True, True)


def saved_inputs(request: Request) -> SavedInputs:
    """The linear inputs ``request`` keeps (see :class:`SavedInputs`).

    A full fine-tune keeps them all (every weight needs its gradient), and so does
    ``generic``, which counts activations as Korthikanti et al. do. Otherwise a frozen
    linear keeps its input only when its framework's quantized matmul does
    (``PROFILE_QUANTIZED_SAVES_INPUTS``) or an adapter without dropout on it does.
    """
    method = request.effective_method
    p = profile(request.framework)
    if method is Method.FULL or p.spec_activations:
        return ALL_SAVED
    if method is Method.QLORA and p.quantized_inputs_saved:
        return ALL_SAVED
    if request.lora_dropout > 0:
        # Each adapter keeps its own dropped-out copy (``LORA_DROPOUT_BYTES``) instead.
        return SavedInputs(False, False, False, False)
    mlp = request.lora_targets == LoraTargets.ALL_LINEAR
    return SavedInputs(True, mlp, mlp, request.lora_targets != LoraTargets.QV)


def _layer_bytes(
    arch: Architecture, request: Request, width: int, keep: SavedInputs, tally: bool = False
) -> float:
    """Bytes one token stores in one decoder layer of MLP width ``width``.

    The attention block keeps the first norm's input (``2h``), Q (``2q``), K and V
    (``2·2kv``), attention's output (``2q``) and, when kept, the Q/K/V input (``2h``);
    the scores (``2·a·s``) without FlashAttention, else the FP32 log-sum-exp (``4a``).
    The MLP keeps the second norm's input (``2h``), when kept its gate/up input
    (``2h``), the gate, activation and up outputs (``3·2I``, gated) or the up output
    (plain), and when kept the down projection's input (``2I``); ``torch.compile``
    fuses the activation and product, keeping gate and up only (one tensor, plain).
    Extra norms (Gemma 2/3) keep their input, ``2h`` each; a layer with one norm (Phi,
    Falcon: attention and MLP in parallel from one norm) keeps one norm input, and its
    output once for both blocks.

    ``tally`` (autograd's count, ``PROFILE_SPEC_ACTIVATIONS`` off) adds what eager
    PyTorch keeps beyond that: each RMSNorm upcasts its input and keeps the FP32 copy
    (``x.float()`` then ``x * rsqrt(mean(x^2))``, in transformers, torchtune and litgpt
    alike), 4 bytes an element where 2 are counted, unless fused kernels or
    ``torch.compile`` replace it (LayerNorm's native kernel keeps its 16-bit input and
    FP32 statistics only); and a kept output-projection input is a contiguous copy
    of attention's output (``transpose(1, 2).contiguous()``), apart from the output
    FlashAttention keeps.
    """
    s, h = request.seq_len, arch.hidden_size
    a = ACTIVATION_BYTES
    attn = a * h * (1 + keep.attention) + 2 * a * arch.q_width + 2 * a * arch.kv_width
    scores = 4 * arch.num_heads if request.flash_attention else a * arch.num_heads * s
    gated = arch.mlp == "gated"
    fused = 2 if gated else 1  # compiled: gate and up (plain: up)
    tensors = fused if request.compile else (3 if gated else 1) + keep.down
    if arch.norms_per_layer < 2:
        # One norm feeds attention and the MLP in parallel (Phi, Falcon): its input and
        # output are the attention block's, counted above.
        mlp = a * h * (keep.mlp and not keep.attention) + a * tensors * width
    else:
        mlp = a * h * (1 + keep.mlp) + a * tensors * width
    post_norms = a * h * max(arch.norms_per_layer - 2, 0)
    extra = 0.0
    if tally:
        extra += a * arch.q_width * keep.output
        eager = not request.compile and profile(request.framework).elementwise_scale == 1.0
        if eager and arch.norm == "rmsnorm":
            extra += (FP32_BYTES - a) * h * arch.norms_per_layer
    return attn + scores + mlp + post_norms + extra


def layer_activation_bytes(arch: Architecture, request: Request, produced: bool = False) -> float:
    """Bytes one token stores for backward across all decoder layers, without
    checkpointing (see the module docstring); the logits are apart.

    ``produced``: count every tensor the forward writes (what the time model's
    elementwise traffic scales with), kept for backward or not.
    """
    keep = ALL_SAVED if produced else saved_inputs(request)
    tally = not produced and not profile(request.framework).spec_activations
    per_layer = sum(
        _layer_bytes(arch, request, width, keep, tally) * count
        for width, count in arch.mlp_width_groups
    )
    return per_layer + _dropout_bytes_per_token(arch, request) * arch.num_layers


def _dropout_bytes_per_token(arch: Architecture, request: Request) -> float:
    """LoRA dropout's mask and dropped-out input, per token per layer (0 without)."""
    if request.lora_dropout <= 0 or request.effective_method is Method.FULL:
        return 0.0
    inputs = arch.lora_input_width(request.lora_targets.value)
    return LORA_DROPOUT_BYTES * inputs / arch.num_layers


def logits_bytes_per_token(arch: Architecture, request: Request) -> float:
    """Bytes of logits one token keeps for the loss: the framework's loss path
    (``engine.profiles.logits_bytes``) times the vocabulary."""
    return logits_bytes(request, LOGITS_BYTES_HF) * arch.vocab_size


def activation_bytes(arch: Architecture, request: Request) -> float:
    """Activation memory of one micro-batch in bytes (see the module docstring)."""
    s, b, h = request.seq_len, request.micro_batch, arch.hidden_size
    tokens = s * b
    if request.grad_checkpointing:
        widest = max(width for width, _ in arch.mlp_width_groups)
        tally = not profile(request.framework).spec_activations
        one_layer = _layer_bytes(arch, request, widest, saved_inputs(request), tally)
        one_layer += _dropout_bytes_per_token(arch, request)
        kept = arch.num_layers
        if request.activation_offload:
            kept = min(kept, OFFLOADED_INPUTS_IN_FLIGHT)
        inputs = ACTIVATION_BYTES * h * kept
        logits = logits_bytes_per_token(arch, request)
        if profile(request.framework).spec_activations:
            return tokens * (inputs + one_layer + logits)
        # The loss's backward frees the logits before the first layer is recomputed.
        return tokens * (inputs + max(one_layer, logits))
    layers = tokens * layer_activation_bytes(arch, request)
    return layers + tokens * logits_bytes_per_token(arch, request)


def autocast_copy_bytes(arch: Architecture, request: Request) -> float:
    """BF16 copies of FP32 weights that autocast keeps for backward, bytes.

    With FP32 weights under BF16 autocast, every matmul runs on a BF16 cast of its
    weight, and autograd keeps that cast for the input's gradient: 2 bytes per linear
    parameter and the LM head, of every layer (one layer's under checkpointing, which
    recomputes the cast). FSDP and ZeRO-3 gather BF16 parameters (their
    mixed-precision policy), so nothing is cast there; ``generic`` counts activations
    as the specification does and adds nothing (``PROFILE_SPEC_ACTIVATIONS``).
    """
    if (
        request.precision is not Precision.FP32
        or request.sharding.shards_weights
        or profile(request.framework).spec_activations
    ):
        return 0.0
    head = arch.vocab_size * arch.hidden_size
    layers: float = arch.linear_params
    if request.grad_checkpointing:
        layers = arch.linear_params / arch.num_layers
    return ACTIVATION_BYTES * (layers + head)


def dequant_workspace_bytes(arch: Architecture, request: Request) -> float:
    """QLoRA's 16-bit copy of its largest 4-bit matrix, alive at the peak, bytes.

    Every 4-bit matmul dequantizes its whole weight, forward and backward, beside all
    the stored activations: the framework's bytes per weight (``PROFILE_DEQUANT_BYTES``)
    times the largest quantized matrix (the LM head where the framework quantizes it,
    ``PROFILE_QUANTIZED_HEAD``). 0 for LoRA, full fine-tunes and ``generic``.
    """
    if request.effective_method is not Method.QLORA:
        return 0.0
    p = profile(request.framework)
    largest = arch.largest_linear_params
    if p.quantized_head:
        largest = max(largest, arch.vocab_size * arch.hidden_size)
    return p.dequant_bytes * largest


def footprint(arch: Architecture, request: Request) -> Footprint:
    """Whole-run memory of ``request`` on ``arch``, before sharding (GB)."""
    method = request.effective_method
    if request.mode is Mode.NAPKIN:
        return _napkin_footprint(arch, method)
    pure = request.state_precision is StatePrecision.PURE_BF16
    params = arch.total_params
    opt_table = OPTIMIZER_BYTES_PURE_BF16 if pure else OPTIMIZER_BYTES
    opt_per_param = opt_table[request.optimizer.value]
    base = base_weight_bytes(arch, request)
    frozen_grads = method is Method.LORA and profile(request.framework).fsdp_frozen_grads
    if method is Method.FULL:
        precision = request.precision.value
        master = 0.0 if pure or precision == "fp32" else MASTER_WEIGHT_BYTES * params
        grad_bytes = PRECISION_BYTES["bf16"] if pure else PRECISION_BYTES[precision]
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
        trainable = lora
        adapter_bytes = PRECISION_BYTES["bf16"] if pure else ADAPTER_BYTES
        master = 0.0
        gradients = adapter_bytes * lora
        optimizer = opt_per_param * lora
        adapter = adapter_bytes * lora
        gathered_bytes = base / params
    return Footprint(
        base_weights=base / GB,
        master_weights=master / GB,
        gradients=gradients / GB,
        optimizer=optimizer / GB,
        adapter=adapter / GB,
        activations=(
            activation_bytes(arch, request)
            + autocast_copy_bytes(arch, request)
            + dequant_workspace_bytes(arch, request)
        )
        / GB,
        overhead=OVERHEAD_GB,
        gathered=arch.largest_layer_params * gathered_bytes / GB,
        gathered_grad=arch.largest_layer_params * grad_bytes / GB if method is Method.FULL else 0.0,
        frozen_grad=base / GB if frozen_grads else 0.0,
        frozen_grad_unit=arch.largest_layer_params * gathered_bytes / GB if frozen_grads else 0.0,
        accumulates=request.grad_accum > 1,
        zero_fp32_grads=(
            MASTER_WEIGHT_BYTES * trainable / GB
            if profile(request.framework).zero_fp32_grads and not pure
            else 0.0
        ),
    )


def _napkin_footprint(arch: Architecture, method: Method) -> Footprint:
    """The napkin rule: 16 / 2.5 / 0.75 bytes per parameter and nothing else.

    The flat figure is shown in the same seven slots: full = 2 weights + 4 master
    + 2 gradients + 8 optimizer; LoRA = 2 weights + 0.5 for adapters and their
    training state; QLoRA = 0.5 weights + 0.25 for adapters and their state.
    """
    p = arch.total_params / GB
    per_param = NAPKIN_BYTES_PER_PARAM[method.value]
    if method is Method.FULL:
        return Footprint(2 * p, 4 * p, 2 * p, 8 * p, 0.0, 0.0, 0.0, 0.0, napkin=True)
    weights = 0.5 if method is Method.QLORA else 2.0
    adapter = (per_param - weights) * p
    return Footprint(weights * p, 0.0, 0.0, 0.0, adapter, 0.0, 0.0, 0.0, napkin=True)
