"""Each framework's facts that its users do not know they chose, named and sourced.

One table per fact, keyed by framework (``engine.choices.Framework`` values);
``engine.profiles`` turns them into a ``Profile`` per framework and is the only reader.
``generic`` keeps the specification's assumptions in every table. Numbers shared with
the rest of the estimate (bytes per logit, kernel counts) live in ``engine.constants``.
"""

from __future__ import annotations

from typing import Final

from engine.constants import LOGITS_BYTES, LOGITS_BYTES_HF

# Sources:
# [HF-loss] see LOGITS_BYTES_HF.
# [tt-table] torchtune README "Memory and training speed" / performance-flags table
#   (Llama 3.2 3B, A100, batch 2 x 4096 packed): standard CE + compile 51.0 GiB, the same
#   with CEWithChunkedOutputLoss 42.9 GiB: 8.7 GB saved over 1.05e9 logits, 8.3 B per
#   logit of a 10 B unfused path, leaving the BF16 logit chunks (2 B).
# [tt-bf16] torchtune README: "we don't support mixed-precision training" (BF16 weights
#   and optimizer states); torchtune PR #1492 set lora_dropout 0.0 in every LoRA config.
# [litgpt] litgpt/utils.py chunked_cross_entropy: BF16 logit chunks (lm_head_chunk_size
#   128) and a BF16 cross-entropy per chunk, 2 + 2 B per logit; finetune/lora.py
#   defaults lora_dropout 0.05 and precision "bf16-true"; Fabric's FSDP strategy wraps
#   each Block (frozen base and adapters in one FSDP1 flat parameter,
#   use_orig_params=True): see FSDP_FROZEN_GRADS.
# [unsloth] unsloth/kernels/cross_entropy_loss.py: fused, chunked cross-entropy that
#   never materializes the logits; Triton RMSNorm, RoPE and SwiGLU kernels; its docs
#   recommend lora_dropout 0 ("optimized").
# [unsloth-multi] unsloth.ai/docs/basics/multi-gpu-training-with-unsloth: "Unsloth currently
#   supports multi-GPU setups through libraries like Accelerate and DeepSpeed" (FSDP, DDP):
#   it trains on the HF Trainer, so its ZeRO is DeepSpeed's.
# [trl] TRL's SFT examples, axolotl's example configs and Qwen's finetune.py use
#   lora_dropout 0.05 (PEFT's own default is 0); the HF Trainer's AMP and DeepSpeed keep
#   FP32 master weights and moments (16 B/param for a full fine-tune).
# [titan] torchtitan train.py: cross_entropy(pred.float()): BF16 logits (2), the FP32
#   copy (4) and the FP32 log-softmax kept for backward (4) at the loss; FSDP2
#   MixedPrecisionPolicy keeps FP32 sharded parameters and moments.
PROFILE_LOGITS_BYTES: Final = {
    "generic": LOGITS_BYTES,  # [detailed]: one FP32 copy
    "hf": LOGITS_BYTES_HF,  # [HF-loss]
    "unsloth": 0.0,  # [unsloth]
    "torchtune": 2.0,  # [tt-table]
    "litgpt": 4.0,  # [litgpt]
    "torchtitan": 10.0,  # [titan]
}
"""Bytes per logit each framework's loss path holds at the loss."""
# [tt-loss] torchtune/modules/loss: CEWithChunkedOutputLoss.compute_cross_entropy and
#   LinearCrossEntropyLoss.compute_cross_entropy run F.cross_entropy(logits.float(), ...)
#   per chunk, and autograd keeps each chunk's FP32 log-softmax for backward (4 B per
#   logit); the recipes compile it (apply_compile_strategy) only under `compile: True`,
#   the [tt-table] case, and torchtune's configs ship `compile: False`.
PROFILE_EAGER_LOGITS_BYTES: Final = {
    "torchtune": 4.0,  # [tt-loss]
}
"""Bytes per logit where a framework's loss path keeps more without ``torch.compile``
than ``PROFILE_LOGITS_BYTES`` says (measured compiled); a framework not listed keeps the
same either way."""
# [softcap] transformers models/gemma2/modeling_gemma2.py Gemma2ForCausalLM.forward:
#   logits / cap, torch.tanh, * cap, then self.loss_function: tanh's backward reads its
#   output, so the BF16 tanh output stays beside the loss path's own copies.
PROFILE_SOFTCAP_BYTES: Final = {
    "hf": 2.0,  # [softcap]
}
"""Bytes per logit a framework keeps for a model's logit soft-cap (``Architecture.
logit_softcap``) beside its loss path; a framework not listed is counted without it (its
soft-cap code was not read: unsloth's fused loss applies the cap inside its kernel)."""
PROFILE_PURE_BF16: Final = {
    "generic": False,
    "hf": False,  # [trl]
    "unsloth": False,  # runs on the HF Trainer [trl]
    "torchtune": True,  # [tt-bf16]
    "litgpt": True,  # [litgpt]
    "torchtitan": False,  # [titan]
}
"""Frameworks that train in pure BF16 (no FP32 master copy, BF16 moments)."""
PROFILE_LORA_DROPOUT: Final = {
    "generic": 0.0,
    "hf": 0.05,  # [trl]
    "unsloth": 0.0,  # [unsloth]
    "torchtune": 0.0,  # [tt-bf16]
    "litgpt": 0.05,  # [litgpt]
    "torchtitan": 0.0,
}
"""LoRA dropout of each framework's default or example configs."""
FSDP_FROZEN_GRADS: Final = {
    "generic": False,
    "hf": False,  # accelerate+PEFT wrap LoRA layers as their own FSDP units
    "unsloth": False,
    "torchtune": False,  # FSDP2: per-parameter sharding, frozen weights get no gradient
    "litgpt": True,  # [litgpt]
    "torchtitan": False,  # FSDP2
}
"""Whether the framework's FSDP gives frozen base weights gradients (torch.distributed.fsdp
docs: with use_orig_params=True and mixed frozen/trainable parameters in one unit, "the
gradient memory usage will be higher than expected (namely, equivalent to not freezing
those parameters)")."""
FSDP_ACCUMULATES_UNSHARDED: Final = {
    "generic": True,  # the memory model's FSDP1 no_sync() rule (engine.memory docstring)
    "hf": True,  # Accelerate's accumulate() runs no_sync() unless sync_each_batch
    "unsloth": True,  # trains on the HF Trainer (Accelerate)
    "torchtune": False,  # [tt-accum]
    "litgpt": True,  # Fabric's no_backward_sync() around every micro-batch but the last
    "torchtitan": False,  # [titan-accum]
}
"""Whether the framework's FSDP accumulates micro-batches with gradient sync off, holding
whole, unsharded gradients until the window's last backward; False: FSDP2
reduce-scatters every micro-batch's gradients into the sharded ones.
[tt-accum] torchtune recipes/full_finetune_distributed.py ``train()``: ``current_loss.
backward()`` every micro-batch, the optimizer step every ``gradient_accumulation_steps``,
and no ``set_requires_gradient_sync(False)`` (the LoRA recipe alike).
[titan-accum] torchtitan train.py ``train_step``: ``forward_backward_step`` per micro-batch,
``loss.backward()`` with no gradient-sync switch."""
FSDP_ROOT_UNIT_GATHERED: Final = {
    "generic": False,  # the specification's gathered units: the largest, twice
    "hf": True,  # [fsdp1-root]: Accelerate's FSDP (fsdp_version 1, its default)
    "unsloth": True,  # trains on the HF Trainer (Accelerate)
    "torchtune": False,  # [fsdp2-root-tt]
    "litgpt": False,  # [fsdp1-root-lg]
    "torchtitan": False,  # [fsdp2-root-titan]
}
"""Whether the framework's FSDP is FSDP1 with decoder layers wrapped as units, whose root
unit (the embeddings, an untied LM head, the final norm) stays gathered from the forward
to the end of the backward, with its whole gradient until that backward ends.
[fsdp1-root] torch/distributed/fsdp/_runtime_utils.py ``_post_forward_reshard``:
``free_unsharded_flat_param = not state._is_root and ...``: the root is not resharded
after forward, and reduces its gradient in its post-backward hook, after the embedding's
gradient, the backward's last.
[fsdp1-root-lg] Lightning Fabric's FSDPStrategy is FSDP1 too, but this model already reads
2-25% above LitGPT's own multi-GPU tables (resource-tables.md, 2023; lg-rt-21 to 31 in
benchmarks/measurements.yaml) without the root unit; adding it moved nine of them further
off and three closer, so it is left out until a LitGPT FSDP run is measured.
FSDP2 keeps its root group gathered after the forward as well (torch/distributed/fsdp/
_fully_shard/_fsdp_state.py ``_lazy_init``: "For the root, do not reshard after forward"),
but: [fsdp2-root-titan] torchtitan's ``apply_fsdp`` shards ``tok_embeddings`` and
``[norm, output]`` as units of their own, so its root group holds no parameters;
[fsdp2-root-tt] torchtune's root holds the embeddings and head unless a config names them
in ``custom_sharded_layers``, and its 70B distributed rows (tt-l31-06/07) read within 9%
without them, where the root would add 4-8 GB per GPU: not counted until a torchtune
FSDP run says otherwise."""
PROFILE_SPEC_ACTIVATIONS: Final = {
    "generic": True,  # [detailed]
    "hf": False,  # [autograd]
    "unsloth": False,  # [autograd]
    "torchtune": False,  # [autograd]
    "litgpt": False,  # [autograd]
    "torchtitan": False,  # [autograd]
}
"""Count activations as the specification does ([detailed], after Korthikanti et al.):
every linear's input kept, and under checkpointing the recomputed layer and the logits
counted together. The real frameworks keep what PyTorch's autograd keeps: [autograd]
a matmul operand is saved only when the derivative that reads it will run
(``guard_for`` in ``tools/autograd/gen_variable_type.py``), so a frozen linear's input is
not kept unless something else (a LoRA adapter without dropout, bitsandbytes) keeps it;
and under checkpointing the logits are freed by the loss's backward before the first
layer is recomputed, so the two peaks do not add."""
PROFILE_QUANTIZED_SAVES_INPUTS: Final = {
    "generic": True,
    "hf": True,  # [bnb]
    "unsloth": True,  # [bnb]; its fused LoRA kernels also keep each block's input
    "torchtune": False,  # [torchao]
    "litgpt": True,  # [bnb] through Lightning's BitsandbytesPrecision
    "torchtitan": False,  # no QLoRA recipe
}
"""Whether QLoRA's 4-bit linears keep their input for backward. [bnb] bitsandbytes
``MatMul4Bit.forward`` stores ``ctx.tensors = (A, B)`` whenever any operand needs a
gradient, so every quantized linear keeps its 16-bit input. [torchao] torchao's
``LinearNF4`` (torchtune's QLoRA) saves only the NF4 weight (``ctx.save_for_backward
(weight)``)."""
PROFILE_DEEPSPEED_ZERO: Final = {
    "generic": False,  # [detailed]: one gradient per trainable parameter
    "hf": True,  # [deepspeed]
    "unsloth": True,  # [unsloth-multi]: through the HF Trainer's DeepSpeed integration
    "torchtune": False,  # its zero3 is FSDP2's per-parameter sharding
    "litgpt": False,  # Fabric's FSDP
    "torchtitan": False,  # FSDP2
}
"""Whether the framework's ZeRO (stage 1-3) is DeepSpeed's. Its optimizer partition
keeps an FP32 copy of its gradients beside the FP32 master weights and moments, and its
ZeRO-3 runs Python hooks per parameter (``ZERO3_HOST_OPS_GATHER``).
[deepspeed] DeepSpeed's own estimators count 16 bytes per parameter over N GPUs
(``estimate_zero2_model_states_mem_needs``: ``4 * total_params + 16 * total_params /
total_gpus``; ZeRO-3: 18 per parameter over N): 4 master + 8 Adam + 4 gradient. Only
with FP32 states (``pure-bf16`` has no FP32 partition)."""
PROFILE_ALWAYS_SHARDS: Final = {
    "generic": False,  # [detailed]: replicas where one card holds the run
    "hf": False,  # `accelerate launch` / `torchrun` run DDP unless told FSDP or DeepSpeed
    "unsloth": False,  # the HF Trainer's launchers, as hf
    "torchtune": True,  # [tt-dist]
    "litgpt": True,  # [lg-dist]
    "torchtitan": True,  # [titan-dist]
}
"""Whether the framework's multi-card training always shards with FSDP, so ``auto`` on
several data-parallel ranks is ``fsdp``, never DDP replicas.
[tt-dist] torchtune's multi-GPU recipes (``full_finetune_distributed``,
``lora_finetune_distributed``) shard the model with FSDP2 (``training.shard_model``); one
card runs a ``single_device`` recipe. [lg-dist] litgpt ``finetune/*.py``: more than one
device (``devices * num_nodes > 1``) selects Fabric's ``FSDPStrategy``; the docs'
"Distributed Training": "LitGPT uses Lightning Fabric with FSDP to distribute training
across multiple GPUs". [titan-dist] torchtitan's ``parallelism.data_parallel_shard_degree``
defaults to -1: every rank no other parallelism uses shards the model (FSDP2)."""
PROFILE_EXPERT_LOOP: Final = {
    "generic": True,  # the MoE layout engine.architecture counts: per-expert modules
    "hf": True,  # [hf-moe-loop]
    "unsloth": True,  # [unsloth-moe-loop]
    "torchtune": False,  # [grouped-mm]
    "litgpt": True,  # [litgpt-moe-loop]
    "torchtitan": False,  # [grouped-mm]
}
"""Whether the framework runs a mixture-of-experts layer's experts one after another, each
that receives a token launching its own kernels (``KERNELS_PER_EXPERT``), rather than
all of them in grouped matmuls.
[hf-moe-loop] transformers 4's sparse MoE blocks (``Qwen3MoeSparseMoeBlock``,
``MixtralSparseMoeBlock``): ``for expert_idx in expert_hit:`` gathers each expert's
tokens, runs its projections and ``index_add_``s the result; PEFT's ``all-linear`` adapts
every expert's linears. The runs this project scores ran so. transformers 5's experts
interface (PR #42697) keeps that loop as ``experts_implementation="eager"`` but defaults to
``"grouped_mm"`` where PyTorch (2.9+) can dispatch it (``PreTrainedModel.
get_correct_experts_implementation``), and stores the experts as 3D parameters, which
``all-linear`` no longer adapts: a run on it is timed closer to torchtune's (the reply
says so). [unsloth-moe-loop] ``unsloth/models/qwen3_moe.py``
``Qwen3MoeSparseMoeBlock_fast_forward`` keeps the per-expert loop. [litgpt-moe-loop]
litgpt ``model.py`` ``LLaMAMoE.forward``: ``for mask, expert in zip(masks,
self.experts)``. [grouped-mm] torchtune's ``GroupedExperts`` and torchtitan's run every
expert's tokens through ``torch._grouped_mm``, one kernel per projection."""
PROFILE_DEQUANT_BYTES: Final = {
    "generic": 0.0,  # [detailed]: the specification counts no workspace
    "hf": 2.0,  # [bnb-dequant]
    "unsloth": 2.0,  # fast_dequantize writes one BF16 copy
    "torchtune": 2.0,  # torchao LinearNF4: weight.to(input.dtype)
    "litgpt": 4.0,  # [lightning-nf4]
    "torchtitan": 0.0,  # no QLoRA recipe
}
"""Bytes per weight of the 16-bit copy QLoRA's matmul makes of a 4-bit matrix, forward
and backward, alive beside every stored activation when the largest one runs.
[bnb-dequant] bitsandbytes ``MatMul4Bit``: ``F.dequantize_4bit(B, quant_state).to(A.dtype)``
dequantizes to the dtype the weight was quantized from; transformers quantizes the BF16
checkpoint, so the cast is a no-op: one copy, 2 B. [lightning-nf4] Lightning's
``BitsandbytesPrecision`` quantizes from ``weight.to(dtype=torch.half)``, so the FP16
dequantized copy is cast again to BF16: two copies, 4 B."""
PROFILE_EAGER_NF4: Final = {
    "generic": False,
    "hf": False,  # bitsandbytes: one CUDA dequantize kernel
    "unsloth": False,  # fast_dequantize: one kernel
    "torchtune": True,  # [torchao-nf4]
    "litgpt": False,  # bitsandbytes through Lightning
    "torchtitan": False,  # no QLoRA recipe
}
"""Frameworks whose QLoRA dequantizes with torchao's ``NF4Tensor`` in eager PyTorch:
unless ``torch.compile`` fuses it, every dequantization runs as a chain of unfused
kernels through 64-bit code indices (``TORCHAO_NF4_EAGER_*``).
[torchao-nf4] torchao ``dtypes/nf4tensor.py`` ``NF4Tensor.get_original_weight``, called
by ``LinearNF4`` (``weight.to(input.dtype)``) forward and backward; torchtune's
``compile`` is off in its configs by default."""
PROFILE_QUANTIZED_HEAD: Final = {
    "generic": False,
    "hf": False,  # transformers keeps the output embedding unquantized
    "unsloth": False,
    "torchtune": False,  # its NF4 applies to the decoder's linears
    "litgpt": True,  # [lightning-nf4] replaces every torch.nn.Linear, the LM head included
    "torchtitan": False,
}
"""Whether the LM head is a 4-bit linear, so its dequantized copy (``vocab x hidden``,
the largest matrix by far for 128K-256K vocabularies) is the QLoRA workspace."""
PROFILE_KBIT_FP32_NORMS: Final = {
    "generic": False,  # [detailed]: 16-bit activations
    "hf": True,  # [peft-kbit]
    "unsloth": False,  # its own loader and Triton norms keep the stream in 16-bit
    "torchtune": False,  # torchao NF4, no FP32 upcast
    "litgpt": False,  # bf16-true: every parameter 16-bit
    "torchtitan": False,  # no QLoRA recipe
}
"""Whether the framework's QLoRA on one GPU or DDP runs with FP32 norms, and so with an
FP32 residual stream. [peft-kbit] PEFT's ``prepare_model_for_kbit_training`` casts every
16-bit parameter that is not 4-bit to FP32 ("cast all non INT8 parameters to fp32"); TRL's
SFTTrainer calls it for every QLoRA model that is not sharded (FSDP and ZeRO-3 QLoRA skip
it) and, under ``bf16``, casts the adapters, embeddings and LM head back to BF16 but keeps
the norms in FP32 (``peft_module_casting_to_bf16``). An RMSNorm returns ``weight *
x.to(input_dtype)``, FP32 with an FP32 weight, and bitsandbytes' ``Linear4bit`` returns
its output in its input's dtype (``matmul_4bit(...).to(inp_dtype)``), so from the first
MLP on the residual stream is FP32: a checkpointed layer input keeps 4 B per element and
the MLP's gate, activation and up outputs 4 B each, where 2 are counted. Attention and
the 4-bit matmuls save their own BF16 casts, which do not change. axolotl (with
FlashAttention) and LLaMA-Factory cast the norms back to 16-bit: for them this overcounts."""
PROFILE_UNTIED_HEAD: Final = {
    "generic": False,
    "hf": False,  # transformers ties them (tie_word_embeddings)
    "unsloth": False,
    "torchtune": False,  # TiedLinear reuses the embedding
    "litgpt": True,  # [litgpt-head]
    "torchtitan": False,
}
"""Whether the framework gives a model with tied embeddings a separate LM head.
[litgpt-head] litgpt's ``GPT`` builds ``lm_head`` and ``transformer.wte`` as two
parameters and never ties them, and ``convert_hf_checkpoint`` copies the embedding into
``lm_head.weight`` when a checkpoint has none, so Gemma, Llama 3.2 1B/3B and the small
Qwen2.5 models carry a second vocab x hidden matrix: stored, and trained with its
optimizer state in a full fine-tune."""
PROFILE_ACTIVATION_OFFLOAD: Final = {
    "generic": False,
    "hf": False,
    "unsloth": True,  # [unsloth]: every notebook sets use_gradient_checkpointing="unsloth"
    "torchtune": False,  # enable_activation_offloading is off in its configs
    "litgpt": False,
    "torchtitan": False,
}
"""Frameworks whose usual setup keeps checkpointed layer inputs in host memory."""
PROFILE_SELECTIVE_CHECKPOINTING_UP_TO: Final = {
    "generic": 0.0,  # [detailed]: full checkpointing
    "hf": 0.0,  # gradient_checkpointing checkpoints whole layers
    "unsloth": 0.0,
    "torchtune": 0.0,  # ac_mode is unset in its configs: whole layers
    "litgpt": 0.0,
    "torchtitan": 16e9,  # [titan-ac]
}
"""Models up to this many parameters get op-level selective activation checkpointing
(``selective_checkpointing``) when checkpointing is left unsaid; 0: never.
[titan-ac] torchtitan's presets: ``llama3_1b``, ``llama3_3b`` and ``llama3_8b.toml`` and
Qwen3 0.6B set ``[activation_checkpoint] mode = "selective"``, ``selective_ac_option =
"op"``; ``llama3_70b.toml``, ``llama3_405b.toml`` and Qwen3 32B set ``mode = "full"``. The
line sits between the largest selective preset (8B) and the smallest full one (32B)."""
PROFILE_OFFLOAD_GRADIENTS: Final = {
    "generic": True,  # [zero-offload]: what "offload" means to most users
    "hf": True,  # [zero-offload] DeepSpeed's offload_optimizer
    "unsloth": True,  # through the HF Trainer's DeepSpeed integration
    "torchtune": False,  # [torchao-offload]
    "litgpt": True,  # only FSDP's CPU offload, which moves them (sharded runs)
    "torchtitan": True,  # only FSDP's CPU offload, which moves them (sharded runs)
}
"""Whether an offloaded optimizer on unsharded weights (one card, DDP, ZeRO-1/2) also
moves the gradients to host memory. [zero-offload] ZeRO-Offload (Ren et al. 2021,
arXiv:2101.06840, §4) "offloads the gradients, optimizer states and optimizer
computation to CPU, while keeping parameters and forward and backward computation on
GPU": DeepSpeed copies each reduced gradient bucket (``reduce_bucket_size``) to its host
buffer as backward produces it, so about one layer's gradient is on the GPU at a time.
[torchao-offload] torchtune's single-device offload is torchao's
``CPUOffloadOptimizer``, whose ``offload_gradients`` defaults to False: the gradients
stay on the GPU."""
PROFILE_FOREACH_ADAMW: Final = {
    "generic": False,  # one fused step, as the specification's time counts none
    "hf": True,  # [hf-optim]
    "unsloth": False,  # its notebooks set optim="adamw_8bit": one bitsandbytes kernel
    "torchtune": False,  # its configs: AdamW(fused=True), or bitsandbytes' 8-bit AdamW
    "litgpt": True,  # [litgpt-optim]
    "torchtitan": False,  # optimizer.implementation "fused" by default
}
"""Frameworks whose AdamW runs unfused, one ``torch._foreach_*`` kernel per operation
(``FOREACH_ADAMW_STEP_BYTES``). [hf-optim] the HF Trainer's default ``optim`` was
``adamw_torch`` (``torch.optim.AdamW()``, foreach on CUDA) from transformers 4.32
(PR #25109) until PR #37358 made ``adamw_torch_fused`` the default with PyTorch >= 2.8
(2025); PEFT's method-comparison loop builds ``torch.optim.AdamW`` itself.
[litgpt-optim] litgpt's ``finetune/full.py`` and ``finetune/lora.py`` build the optimizer
with ``instantiate_torch_optimizer(optimizer, model.parameters())`` (default
``"AdamW"``, no ``fused``); only ``pretrain.py`` passes ``fused=True``. Under DeepSpeed
ZeRO the step is DeepSpeed's FusedAdam whatever the framework. The unfused step also
allocates one moment-sized temporary (``engine.memory``, ``Footprint.step_workspace``).
A user who says ``adamw-fused`` (HF's ``adamw_torch_fused``, the Trainer's default with
PyTorch >= 2.8) gets the fused step under any framework."""
PROFILE_ELEMENTWISE_SCALE: Final = {
    "generic": 1.0,
    "hf": 1.0,
    "unsloth": 0.5,  # [unsloth]: fused Triton kernels for the elementwise chains
    "torchtune": 1.0,  # compile is off in its configs by default
    "litgpt": 1.0,
    "torchtitan": 1.0,
}
"""Memory-bound elementwise traffic relative to eager PyTorch. Unsloth's fused kernels
replace multi-kernel chains (norm, RoPE, SwiGLU, loss) with one pass each; 0.5 is an
assumption (half the reads and writes), not a measurement."""
PROFILE_CUDNN_ATTENTION_FROM: Final[dict[str, float | None]] = {
    "generic": None,  # FlashAttention-2, as the specification's FLOP rate assumes
    "hf": 9.0,  # [hf-sdpa]
    "unsloth": None,  # [sdpa-order]
    "torchtune": None,  # [sdpa-order]
    "litgpt": None,  # [sdpa-order]
    "torchtitan": 10.0,  # [titan-cudnn]
}
"""The compute capability from which the framework's attention puts cuDNN's fused
kernels first (the card's native attention, ``native_attention``); None: FlashAttention-2
on every card. [titan-cudnn] torchtitan's ``ScaledDotProductAttention`` calls SDPA under
``sdpa_kernel([FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH], set_priority=True)`` and
inserts ``CUDNN_ATTENTION`` first when ``has_cuda_capability(10, 0)`` (PR #1196, 2025:
"Use cudnn backend on B200"), so Hopper runs FlashAttention-2 and Blackwell cuDNN.
[hf-sdpa] transformers' default ``attn_implementation`` is ``sdpa``, which runs in
PyTorch's own order; from PyTorch 2.11 its bundled cuDNN passes the 9.15 threshold of
``check_prefer_cudnn_attention`` and SDPA puts cuDNN first on sm_90/sm_100. Measured on an
H200 with torch 2.11 (benchmarks/gpu_runs/h200-2026-12-04-attention.jsonl): SDPA's own
choice ran at cuDNN's rate at every length (529 vs 525 TFLOPs at 8,192 tokens;
FlashAttention-2 284), and this project's Qwen3 0.6B runs at 16,384 and 32,768 tokens read
33% and 56% faster than FlashAttention-2 allows (ftcost-h200f-02, -03). flash-attn's
``flash_attention_2`` (``fa2``) and PyTorch before 2.11 run FlashAttention-2: a query that
names it says so. [sdpa-order] torchtune, litgpt and Unsloth are counted on FlashAttention-2
on every card: PyTorch's order before 2.11, the releases their scored runs used; no run on
Hopper measures them."""
PROFILE_FP32_ADAPTERS: Final = {
    "generic": False,  # one 16-bit adapter path, as the specification counts it
    "hf": True,  # [peft-autocast]
    "unsloth": False,  # its fused LoRA kernels (fast_lora) replace PEFT's forward
    "torchtune": False,  # LoRALinear in the model's BF16
    "litgpt": False,  # bf16-true: adapters in BF16
    "torchtitan": False,  # no LoRA recipe
}
"""Frameworks whose LoRA adapters are FP32 on a 16-bit base, each with its own input casts.
[peft-autocast] ``get_peft_model(..., autocast_adapter_dtype=True)`` (the default) casts
BF16 and FP16 adapter weights to FP32; ``LoraLayer.forward`` casts its input to the
adapter's dtype (``_cast_input_dtype``), and under the Trainer's BF16 autocast ``lora_A``
casts it back, so every adapter keeps its own 16-bit copy of its input for backward
(q, k and v three, where a shared input is one) and moves ``PEFT_ADAPTER_CAST_BYTES``;
``PEFT_ADAPTER_KERNELS`` per forward. TRL casts a 4-bit model's adapters back to BF16
where it prepares it in k-bit (``peft_module_casting_to_bf16``), but there the residual
stream is FP32 (``PROFILE_KBIT_FP32_NORMS``): each adapter's input is cast for its BF16
matmul and the base output's clone and the add run in FP32, as much traffic again, so it
is counted the same (measured on an H200: TRL's QLoRA runs as slowly as the model says
with it, and 22-32% slower than it says without)."""
PROFILE_QLORA_ONE_DEVICE: Final = frozenset({"litgpt"})
"""Frameworks whose QLoRA runs on one card only. [lg-quantize] litgpt ``finetune/lora.py``:
with ``devices * num_nodes > 1`` and ``quantize`` set it raises ``NotImplementedError(
"Quantization is currently not supported for multi-GPU training. Please set devices=1
...")``."""

PROFILE_TRAINS_EVERY_WEIGHT: Final = frozenset({"torchtitan"})
"""Frameworks whose recipes train every weight, so a query that names one and no method
is a full fine-tune (the others' default is LoRA). [titan-full] torchtitan's presets
(``llama3_8b.toml`` and the rest) train the whole model; adapters come only through a
``model.converters`` entry (pytorch/torchtitan issue #2515, "Support LoRA at TorchTitan",
2026), which a query names as ``lora``."""

