"""Activations: what one micro-batch keeps for backward, in bytes.

The specification's count (re-derived from Korthikanti et al. 2022, §4.1)
--------------------------------------------------------------------------
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
  16-bit input, ``3·d_in`` (``LORA_DROPOUT_BYTES``);
* DoRA: for each adapted linear, the base and LoRA outputs its magnitude products keep,
  ``4·d_out`` (``DORA_SAVED_BYTES``).

So a dense gated layer with two norms stores ``s·b·(8h + 4q + 4kv + 8I)`` bytes
plus the scores term; for Llama 3.1 8B at batch 1 and sequence 2048 that is 11.0 GB
over 32 layers. For MoE layers ``I`` is the width a token passes through
(k routed experts plus shared experts).

Gradient checkpointing keeps each layer's input (``2·s·b·h`` per layer) plus one
layer's full activations while that layer is recomputed; selective (op-level)
checkpointing also keeps every other matmul's output and attention's
(:mod:`engine.selective`). The logits,
``b·s·vocab`` upcast to FP32 for the loss, come on top unless a fused
cross-entropy kernel (Liger, Unsloth) avoids materializing them. Hugging Face
transformers' unfused path keeps more copies at once (``hf-loss``: 12 B per logit,
sourced at ``engine.constants.LOGITS_BYTES_HF``).

What autograd keeps
-------------------
``generic`` keeps that count. Every real framework's profile counts what PyTorch's
autograd keeps instead (``PROFILE_SPEC_ACTIVATIONS``):

* a frozen linear keeps no input unless a dropout-free adapter or bitsandbytes' 4-bit
  matmul does (:func:`saved_inputs`);
* eager RMSNorm keeps an FP32 copy of its input, and a kept output-projection input is
  a copy apart from FlashAttention's output (:func:`_layer_bytes`, ``tally``);
* under checkpointing the logits and the recomputed layer peak apart
  (:func:`activation_bytes`);
* FP32 weights under BF16 autocast keep a BF16 cast of each weight
  (:func:`autocast_copy_bytes`), and QLoRA a 16-bit copy of its largest 4-bit matrix
  (:func:`dequant_workspace_bytes`);
* QLoRA with FP32 norms (``hf`` on one GPU or DDP) runs its residual stream in FP32, so
  checkpointed layer inputs and the MLP's activation-function tensors take 4 bytes an
  element (:func:`stream_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engine import selective
from engine.architecture import Architecture
from engine.choices import LoraTargets, Method, Precision, StatePrecision
from engine.constants import (
    ACTIVATION_BYTES,
    DORA_EYE_BYTES,
    DORA_SAVED_BYTES,
    DORA_WORKSPACE_BYTES,
    FP32_BYTES,
    LOGITS_BYTES_HF,
    LORA_DROPOUT_BYTES,
    OFFLOADED_INPUTS_IN_FLIGHT,
    TORCHAO_NF4_EAGER_PEAK_BYTES,
)
from engine.profiles import eager_nf4_dequant, fp32_residual_stream, logits_bytes, profile
from engine.request import Request


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
    attention_copies: int = 1
    """Copies of the Q/K/V input kept: one shared, or one per adapter where each adapter
    casts its own (``PROFILE_FP32_ADAPTERS``)."""
    mlp_copies: int = 1
    """Copies of the gate/up input kept, likewise."""
    copy_bytes: float = ACTIVATION_BYTES
    """Bytes an element of a kept linear input: 16-bit, or FP32 where each FP32 adapter
    keeps its own cast of its input (``adapter_path`` plain)."""


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
    targets = request.lora_targets
    attention = targets is not LoraTargets.MLP
    mlp = targets in (LoraTargets.ALL_LINEAR, LoraTargets.MLP)
    output = targets in (LoraTargets.ALL_LINEAR, LoraTargets.ATTENTION)
    if not uses_fp32_adapters(request):
        return SavedInputs(attention, mlp, mlp, output)
    # Each adapter keeps its own copy: autocast's 16-bit cast of its FP32 cast, or plainly
    # the FP32 cast itself.
    qkv = 2 if targets is LoraTargets.QV else 3
    width = FP32_BYTES if adapter_path(request) == "plain" else ACTIVATION_BYTES
    return SavedInputs(
        attention, mlp, mlp, output, attention_copies=qkv, mlp_copies=2, copy_bytes=width
    )


def _layer_bytes(
    arch: Architecture, request: Request, width: int, keep: SavedInputs, tally: bool = False
) -> float:
    """Bytes one token stores in one decoder layer of MLP width ``width``.

    The attention block keeps the first norm's input (``2h``), Q (``2q``), K and V
    (``2·2kv``), attention's output (``2q``) and, when kept, the Q/K/V input (``2h``);
    the scores (``2·a·s``) without FlashAttention, else the FP32 log-sum-exp (``4a``).
    The MLP keeps the second norm's input (``2h``), when kept its gate/up input
    (``2h``), the gate, activation and up outputs (``3·2I``, gated; 4 bytes each in an
    FP32 stream, :func:`stream_bytes`) or the up output (plain), and when kept the down
    projection's input (``2I``); ``torch.compile``
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
    c = keep.copy_bytes
    attn = a * h + c * h * keep.attention * keep.attention_copies
    attn += 2 * a * arch.q_width + 2 * a * arch.kv_width
    scores = 4 * arch.num_heads if request.flash_attention else a * arch.num_heads * s
    gated = arch.mlp == "gated"
    fused = 2 if gated else 1  # compiled: gate and up (plain: up)
    # The activation function's tensors run in the stream's dtype (FP32 under QLoRA's
    # FP32 norms); the down projection's kept input is a 16-bit copy either way.
    outputs = fused if request.compile else (3 if gated else 1)
    down = 0 if request.compile else keep.down
    tensors_bytes = (stream_bytes(request) * outputs + c * down) * width
    if arch.norms_per_layer < 2:
        # One norm feeds attention and the MLP in parallel (Phi, Falcon): its input and
        # output are the attention block's, counted above.
        mlp = a * h * (keep.mlp and not keep.attention) + tensors_bytes
    else:
        mlp_inputs = keep.mlp * (keep.mlp_copies if gated else 1)
        mlp = a * h + c * h * mlp_inputs + tensors_bytes
    post_norms = a * h * max(arch.norms_per_layer - 2, 0)
    extra = 0.0
    if tally:
        extra += c * arch.q_width * keep.output
        eager = not request.compile and profile(request.framework).elementwise_scale == 1.0
        if eager and arch.norm == "rmsnorm":
            extra += (FP32_BYTES - a) * h * arch.norms_per_layer
    return attn + scores + mlp + post_norms + extra


def stream_bytes(request: Request) -> float:
    """Bytes per element of the residual stream and the MLP's activation-function
    tensors: FP32 under QLoRA with FP32 norms (``engine.profiles.fp32_residual_stream``),
    else 16-bit."""
    return FP32_BYTES if fp32_residual_stream(request) else ACTIVATION_BYTES


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
    return per_layer + _adapter_bytes_per_token(arch, request) * arch.num_layers


def uses_fp32_adapters(request: Request) -> bool:
    """LoRA or QLoRA with adapters in FP32 on a 16-bit base, each casting its own input
    (``fp32_adapters``: PEFT's default, so the ``hf`` profile's, ``PROFILE_FP32_ADAPTERS``)."""
    return request.effective_method is not Method.FULL and request.fp32_adapters


def adapter_path(request: Request) -> Literal["autocast", "plain"]:
    """How FP32 PEFT adapters meet the BF16 base: ``"autocast"`` under the Trainer's
    BF16 autocast (mixed precision, the ``hf`` default), ``"plain"`` when the user trains
    the BF16 model as it is (``pure bf16``): then each adapter's FP32 cast of its input is
    what its matmul reads and keeps."""
    return "plain" if request.state_precision is StatePrecision.PURE_BF16 else "autocast"


def uses_dora(request: Request) -> bool:
    """DoRA on adapters (``dora`` with LoRA or QLoRA; a full fine-tune has none)."""
    return request.dora and request.effective_method is not Method.FULL


def _adapter_bytes_per_token(arch: Architecture, request: Request) -> float:
    """What the adapters keep beyond the base layers, per token per layer: LoRA
    dropout's masks and inputs, DoRA's two outputs per adapted linear."""
    extra = _dropout_bytes_per_token(arch, request)
    if uses_dora(request):
        outputs = arch.lora_output_width(request.lora_targets.value)
        extra += DORA_SAVED_BYTES * outputs / arch.num_layers
    return extra


def dora_workspace_bytes(arch: Architecture, request: Request) -> float:
    """DoRA's weight-sized temporaries at the adapted linear whose forward needs the
    most, bytes: ``DORA_WORKSPACE_BYTES`` per weight and the d_in x d_in identity (the
    down projection, for a gated MLP). 0 without DoRA."""
    if not uses_dora(request):
        return 0.0
    return max(
        (DORA_WORKSPACE_BYTES * d_in * d_out + DORA_EYE_BYTES * d_in * d_in
         for d_in, d_out, _, _ in arch.adapted_shapes(request.lora_targets.value)),
        default=0.0,
    )


def _dropout_bytes_per_token(arch: Architecture, request: Request) -> float:
    """LoRA dropout's mask and dropped-out input, per token per layer (0 without)."""
    if request.lora_dropout <= 0 or request.effective_method is Method.FULL:
        return 0.0
    inputs = arch.lora_input_width(request.lora_targets.value)
    return LORA_DROPOUT_BYTES * inputs / arch.num_layers


def logits_bytes_per_token(arch: Architecture, request: Request) -> float:
    """Bytes of logits one token keeps for the loss: the framework's loss path
    (``engine.profiles.logits_bytes``), and its copy of a soft-capped model's tanh output
    unless the loss is fused (``Profile.softcap_bytes``), times the vocabulary."""
    per_logit = logits_bytes(request, LOGITS_BYTES_HF)
    if arch.logit_softcap and per_logit:
        per_logit += profile(request.framework).softcap_bytes
    return per_logit * arch.vocab_size


def activation_bytes(arch: Architecture, request: Request) -> float:
    """Activation memory of one micro-batch in bytes (see the module docstring)."""
    s, b, h = request.seq_len, request.micro_batch, arch.hidden_size
    tokens = s * b
    if request.grad_checkpointing:
        widest = max(width for width, _ in arch.mlp_width_groups)
        tally = not profile(request.framework).spec_activations
        one_layer = _layer_bytes(arch, request, widest, saved_inputs(request), tally)
        one_layer += _adapter_bytes_per_token(arch, request)
        kept = arch.num_layers
        if request.activation_offload:
            kept = min(kept, OFFLOADED_INPUTS_IN_FLIGHT)
        inputs = stream_bytes(request) * h * kept
        if request.selective_checkpointing:
            inputs += selective.saved_bytes_per_token(arch, request)
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
    the stored activations: the framework's bytes per weight (``PROFILE_DEQUANT_BYTES``;
    torchao's unfused eager chain without ``torch.compile``,
    ``TORCHAO_NF4_EAGER_PEAK_BYTES``) times the largest quantized matrix (the LM head
    where the framework quantizes it, ``PROFILE_QUANTIZED_HEAD``). 0 for LoRA, full
    fine-tunes and ``generic``.
    """
    if request.effective_method is not Method.QLORA:
        return 0.0
    p = profile(request.framework)
    largest = arch.largest_linear_params
    if p.quantized_head:
        largest = max(largest, arch.vocab_size * arch.hidden_size)
    per_weight = TORCHAO_NF4_EAGER_PEAK_BYTES if eager_nf4_dequant(request) else p.dequant_bytes
    return per_weight * largest
