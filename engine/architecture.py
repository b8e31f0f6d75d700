"""Transformer architectures and their parameter counts.

A model's parameter count is derived from its architecture, never typed in:
embeddings, per-layer attention (multi-head, grouped-query or DeepSeek's
multi-head latent attention, with biases where the family has them), the MLP
(gated as in SwiGLU/GeGLU, or plain), mixture-of-experts blocks (routed experts,
shared experts, routers, dense first layers), norms, and the LM head unless it is
tied to the embeddings. Field names follow Hugging Face ``config.json``.

The counts are checked against each model's official total in the tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class MoE(BaseModel):
    """Mixture-of-experts MLP (Mixtral, Qwen-MoE, DeepSeek, gpt-oss)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    num_experts: int = Field(ge=1)
    experts_per_token: int = Field(ge=1)
    expert_intermediate_size: int = Field(ge=1)
    num_shared_experts: int = Field(default=0, ge=0)
    shared_intermediate_size: int | None = None
    """Width of each shared expert; defaults to ``expert_intermediate_size``."""
    shared_expert_gate: bool = False
    """Qwen-MoE scales the shared expert by a sigmoid gate (one hidden→1 linear)."""
    first_dense_layers: int = Field(default=0, ge=0)
    """Leading layers with a dense MLP of ``intermediate_size`` (DeepSeek-V3: 3)."""
    router_bias: bool = False
    expert_bias: bool = False
    """Biases on each expert's projections (gpt-oss)."""

    @model_validator(mode="after")
    def _routes_to_existing_experts(self) -> MoE:
        if self.experts_per_token > self.num_experts:
            raise ValueError(f"{self.experts_per_token} experts per token of "
                             f"{self.num_experts} experts")
        return self
    router_correction_bias: bool = False
    """DeepSeek-V3's per-expert score correction bias (``e_score_correction_bias``)."""


class MLA(BaseModel):
    """DeepSeek multi-head latent attention (low-rank compressed Q and KV)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    q_lora_rank: int | None = None
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True, slots=True)
class Linear:
    """One kind of linear layer: ``count`` copies of a ``d_in x d_out`` matrix.

    ``group`` is ``attention``, ``mlp``, ``expert`` or ``router``; ``role`` is the
    projection's short name (``q``, ``k``, ``v``, ``o``, ``gate``, ``up``, ``down``...).
    ``active`` copies are the ones a token passes through (routed experts: k of E).
    """

    role: str
    group: Literal["attention", "mlp", "expert", "router"]
    d_in: int
    d_out: int
    count: int
    active: int
    bias: bool = False

    @property
    def params(self) -> int:
        """Weights (and biases) of every copy of this linear, parameters."""
        return self.count * (self.d_in * self.d_out + (self.d_out if self.bias else 0))

    @property
    def active_params(self) -> int:
        """Weights (and biases) of the copies one token passes through (the routed experts),
        parameters."""
        return self.active * (self.d_in * self.d_out + (self.d_out if self.bias else 0))


@dataclass(frozen=True, slots=True)
class Adapted:
    """Sums over the linears LoRA adapts for one target set (widths in elements)."""

    widths: int
    """``d_in + d_out`` over every adapted copy: LoRA parameters at rank 1."""
    active_widths: int
    """``d_in + d_out`` over the copies one token passes through."""
    input_width: int
    output_width: int
    """``d_in`` and ``d_out`` over the copies one token passes through."""
    magnitudes: int
    """``d_out`` over every copy: DoRA's magnitude vectors."""
    shapes: tuple[tuple[int, int, int, int], ...]
    """``(d_in, d_out, copies, active)`` per adapted linear kind."""
    linears: tuple[Linear, ...]
    """The adapted linear kinds themselves."""

    @classmethod
    def of(cls, linears: tuple[Linear, ...]) -> Adapted:
        return cls(
            widths=sum(lin.count * (lin.d_in + lin.d_out) for lin in linears),
            active_widths=sum(lin.active * (lin.d_in + lin.d_out) for lin in linears),
            input_width=sum(lin.active * lin.d_in for lin in linears),
            output_width=sum(lin.active * lin.d_out for lin in linears),
            magnitudes=sum(lin.count * lin.d_out for lin in linears),
            shapes=tuple((lin.d_in, lin.d_out, lin.count, lin.active) for lin in linears),
            linears=linears,
        )


class Architecture(BaseModel):
    """A decoder-only transformer, described by its ``config.json`` fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hidden_size: int = Field(ge=1)
    num_layers: int = Field(ge=1)
    num_heads: int = Field(ge=1)
    num_kv_heads: int = Field(ge=1)
    head_dim: int | None = None
    """Per-head width; ``hidden_size // num_heads`` when absent."""
    intermediate_size: int = Field(ge=1)
    """Dense MLP width (for MoE: the dense first layers' width, if any)."""
    vocab_size: int = Field(ge=1)
    tie_embeddings: bool = False
    lm_head_bias: bool = False
    """The LM head has a bias vector of ``vocab_size`` (Phi-1.5, Phi-2)."""
    learned_positions: int = Field(default=0, ge=0)
    """Rows of a learned absolute position table of ``hidden_size`` (GPT-2: 1024, OPT:
    2048 + 2 offset rows); 0 for rotary or ALiBi. Counted with the embeddings and,
    like them, frozen under LoRA and kept in BF16 under QLoRA."""
    mlp: Literal["gated", "plain"] = "gated"
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    norms_per_layer: int = Field(default=2, ge=0)
    """Hidden-width norms per layer (Gemma 2/3 have four: pre and post each block)."""
    qk_norm: Literal["none", "head", "full"] = "none"
    """Norms on queries and keys: per head (Qwen3, Gemma 3) or full width (OLMo 2)."""
    attention_sinks: bool = False
    """gpt-oss learns one sink logit per head per layer."""
    logit_softcap: bool = False
    """The logits pass through ``cap * tanh(logits / cap)`` before the loss (Gemma 2's
    ``final_logit_softcapping``), whose output autograd keeps (``PROFILE_SOFTCAP_BYTES``)."""
    moe: MoE | None = None
    mla: MLA | None = None

    @model_validator(mode="after")
    def _kv_heads_group_the_heads(self) -> Architecture:
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"{self.num_kv_heads} key/value heads do not divide "
                             f"{self.num_heads} attention heads")
        return self

    # ---- derived widths -----------------------------------------------------
    @property
    def head_width(self) -> int:
        """Width of one attention head (``head_dim``, else hidden size / heads), elements."""
        return self.head_dim or self.hidden_size // self.num_heads

    @property
    def q_width(self) -> int:
        """Width of the query projection's output (heads x head width)."""
        if self.mla:
            return self.num_heads * (self.mla.qk_nope_head_dim + self.mla.qk_rope_head_dim)
        return self.num_heads * self.head_width

    @property
    def kv_width(self) -> int:
        """Width of one of the key/value projections' outputs (GQA: kv heads x head width)."""
        if self.mla:
            return self.num_heads * self.mla.v_head_dim
        return self.num_kv_heads * self.head_width

    @property
    def norm_weights(self) -> int:
        """Parameters in one norm per hidden unit (LayerNorm has a bias too)."""
        return 2 if self.norm == "layernorm" else 1

    @property
    def moe_layers(self) -> int:
        """Decoder layers with a mixture-of-experts MLP."""
        return 0 if self.moe is None else self.num_layers - self.moe.first_dense_layers

    @property
    def dense_layers(self) -> int:
        """Decoder layers with a dense MLP."""
        return self.num_layers - self.moe_layers

    # ---- linear layers -------------------------------------------------------
    def _attention_linears(self) -> Iterator[Linear]:
        n, h = self.num_layers, self.hidden_size
        if self.mla:
            m = self.mla
            qk = m.qk_nope_head_dim + m.qk_rope_head_dim
            if m.q_lora_rank:
                yield Linear("q_a", "attention", h, m.q_lora_rank, n, n)
                yield Linear("q", "attention", m.q_lora_rank, self.num_heads * qk, n, n)
            else:
                yield Linear("q", "attention", h, self.num_heads * qk, n, n)
            yield Linear("kv_a", "attention", h, m.kv_lora_rank + m.qk_rope_head_dim, n, n)
            yield Linear(
                "v",
                "attention",
                m.kv_lora_rank,
                self.num_heads * (m.qk_nope_head_dim + m.v_head_dim),
                n,
                n,
            )
            yield Linear("o", "attention", self.num_heads * m.v_head_dim, h, n, n, self.o_bias)
            return
        b = self.qkv_bias
        yield Linear("q", "attention", h, self.q_width, n, n, b)
        yield Linear("k", "attention", h, self.kv_width, n, n, b)
        yield Linear("v", "attention", h, self.kv_width, n, n, b)
        yield Linear("o", "attention", self.q_width, h, n, n, self.o_bias)

    def _mlp_linears(
        self, width: int, group: Literal["mlp", "expert"], count: int, active: int, bias: bool
    ) -> Iterator[Linear]:
        h = self.hidden_size
        if self.mlp == "gated":
            yield Linear("gate", group, h, width, count, active, bias)
        yield Linear("up", group, h, width, count, active, bias)
        yield Linear("down", group, width, h, count, active, bias)

    def linear_layers(self) -> tuple[Linear, ...]:
        """Every linear layer inside the decoder blocks (the LM head is not one here)."""
        return self._linears

    @cached_property
    def _linears(self) -> tuple[Linear, ...]:
        out = list(self._attention_linears())
        if self.dense_layers:
            out += self._mlp_linears(
                self.intermediate_size, "mlp", self.dense_layers, self.dense_layers, self.mlp_bias
            )
        if self.moe:
            e, n = self.moe, self.moe_layers
            out += self._mlp_linears(
                e.expert_intermediate_size,
                "expert",
                n * e.num_experts,
                n * e.experts_per_token,
                e.expert_bias,
            )
            if e.num_shared_experts:
                width = e.shared_intermediate_size or e.expert_intermediate_size
                k = n * e.num_shared_experts
                out += self._mlp_linears(width, "mlp", k, k, self.mlp_bias)
            out.append(
                Linear("router", "router", self.hidden_size, e.num_experts, n, n, e.router_bias)
            )
            if e.shared_expert_gate:
                out.append(Linear("shared_gate", "router", self.hidden_size, 1, n, n))
        return tuple(out)

    # ---- parameter counts ------------------------------------------------------
    @cached_property
    def embedding_params(self) -> int:
        """Input embedding plus the LM head when it is not tied (and its bias, if any),
        plus a learned position table when the family has one."""
        per = self.vocab_size * self.hidden_size
        head_bias = self.vocab_size if self.lm_head_bias else 0
        positions = self.learned_positions * self.hidden_size
        return (per if self.tie_embeddings else 2 * per) + head_bias + positions

    @cached_property
    def norm_params(self) -> int:
        """All norms: per-layer hidden norms, Q/K norms, latent norms, the final norm."""
        per_layer = self.norms_per_layer * self.hidden_size * self.norm_weights
        if self.qk_norm == "head":
            per_layer += 2 * self.head_width
        elif self.qk_norm == "full":
            per_layer += self.q_width + self.num_kv_heads * self.head_width
        if self.mla:
            per_layer += self.mla.kv_lora_rank + (self.mla.q_lora_rank or 0)
        return self.num_layers * per_layer + self.hidden_size * self.norm_weights

    @cached_property
    def other_params(self) -> int:
        """Small per-layer tensors that are neither linear nor norm (sinks, correction bias)."""
        extra = 0
        if self.attention_sinks:
            extra += self.num_layers * self.num_heads
        if self.moe and self.moe.router_correction_bias:
            extra += self.moe_layers * self.moe.num_experts
        return extra

    @cached_property
    def weight_matrices(self) -> int:
        """Weight matrices (parameter tensors of the linears, every expert counted), plus
        the embedding and an untied LM head: the tensors ZeRO-3 gathers one by one."""
        return self.decoder_matrices + (1 if self.tie_embeddings else 2)

    @cached_property
    def decoder_matrices(self) -> int:
        """Weight matrices of the decoder's linears, every expert counted (what QLoRA
        quantizes and dequantizes one by one)."""
        return sum(lin.count for lin in self._linears)

    @cached_property
    def small_tensors(self) -> int:
        """Norm weights and bias vectors: tensors small enough (under 10 x hidden) that
        ZeRO-3 keeps them whole on every GPU (``stage3_param_persistence_threshold``)."""
        norms = self.norms_per_layer * self.num_layers + 1
        biases = sum(lin.count for lin in self._linears if lin.bias)
        return norms + biases

    def lora_factors(self, rank: int, targets: str) -> Iterator[tuple[int, int]]:
        """(elements, copies) of each LoRA factor: ``A`` (rank x d_in) and ``B``
        (d_out x rank) of every adapted linear kind, every expert counted."""
        for lin in self._targeted(targets):
            yield rank * lin.d_in, lin.count
            yield rank * lin.d_out, lin.count

    @cached_property
    def linear_params(self) -> int:
        """Parameters in the decoder's linear layers (what NF4 quantizes)."""
        return sum(lin.params for lin in self._linears)

    @cached_property
    def largest_linear_params(self) -> int:
        """Weights of the largest single decoder matrix (one copy, one expert)."""
        return max((lin.d_in * lin.d_out for lin in self._linears), default=0)

    @cached_property
    def total_params(self) -> int:
        """Every parameter: linears, embeddings (the head when untied), norms and the rest."""
        return self.linear_params + self.embedding_params + self.norm_params + self.other_params

    @cached_property
    def active_params(self) -> int:
        """Parameters a token passes through: all of them for a dense model, k of E
        routed experts for MoE. The input embedding is a lookup and still counted,
        as model cards do."""
        if self.moe is None:
            return self.total_params
        linear = sum(lin.active_params for lin in self._linears)
        return linear + self.embedding_params + self.norm_params + self.other_params

    @cached_property
    def active_linear_params(self) -> int:
        """Decoder linear parameters one token passes through (k of E routed experts)."""
        return sum(lin.active_params for lin in self._linears)

    def lora_active_params(self, rank: int, targets: str) -> int:
        """LoRA parameters one token passes through (adapters of its k routed experts)."""
        return rank * self.adapted(targets).active_widths

    def lora_params(self, rank: int, targets: str) -> int:
        """Trainable parameters of rank-``rank`` LoRA on ``targets`` (``LoraTargets``
        value): ``rank x (d_in + d_out)`` per adapted linear, every copy (expert)."""
        return rank * self.adapted(targets).widths

    def lora_input_width(self, targets: str) -> int:
        """Summed input width of the adapted linears a token passes through, over all
        layers (routed experts: the k it is sent to). LoRA dropout keeps a copy of
        each of these inputs."""
        return self.adapted(targets).input_width

    def lora_output_width(self, targets: str) -> int:
        """Summed output width of the adapted linears a token passes through, over all
        layers (routed experts: the k it is sent to). DoRA keeps two tensors of each."""
        return self.adapted(targets).output_width

    def lora_magnitudes(self, targets: str) -> int:
        """DoRA's magnitude vectors: one value per output of every adapted linear, every
        copy (expert) counted."""
        return self.adapted(targets).magnitudes

    def adapted_shapes(self, targets: str) -> tuple[tuple[int, int, int, int], ...]:
        """``(d_in, d_out, copies, active)`` of every adapted linear kind: every expert
        counted, and the ones a token passes through."""
        return self.adapted(targets).shapes

    @cached_property
    def _adapted(self) -> dict[str, Adapted]:
        """:meth:`adapted` per target set, filled as asked (an estimate asks the same set
        dozens of times; an architecture meets two or three sets)."""
        return {}

    def adapted(self, targets: str) -> Adapted:
        """The sums over the linears LoRA adapts for ``targets`` (:meth:`_targeted`)."""
        found = self._adapted.get(targets)
        if found is None:
            found = self._adapted[targets] = Adapted.of(tuple(self._targeted(targets)))
        return found

    def _targeted(self, targets: str) -> Iterator[Linear]:
        """The linears LoRA adapts for ``targets``: ``all-linear`` (every projection except
        routers, as PEFT's ``all-linear`` does minus the LM head), ``attention`` (q, k, v, o
        and the latent projections for MLA), ``qv``, or ``mlp`` (the MLP's projections and
        every expert's)."""
        for lin in self._linears:
            if lin.group == "router":
                continue
            if targets == "attention" and lin.group != "attention":
                continue
            if targets == "qv" and lin.role not in ("q", "v"):
                continue
            if targets == "mlp" and lin.group == "attention":
                continue
            yield lin

    def targeted_linears(self, targets: str) -> tuple[Linear, ...]:
        """The kinds of linear LoRA adapts for ``targets``."""
        return self.adapted(targets).linears

    def _mlp_copy_params(self, width: int, bias: bool) -> int:
        """Parameters of one MLP (or one expert) of the given width."""
        mats = 3 if self.mlp == "gated" else 2
        biases = (mats - 1) * width + self.hidden_size if bias else 0
        return mats * self.hidden_size * width + biases

    @cached_property
    def largest_layer_params(self) -> int:
        """Parameters of the largest single unit ZeRO-3/FSDP gathers at once.

        FSDP wraps one decoder layer at a time; the embedding (and an untied LM
        head) is its own unit, so the larger of one decoder layer and the
        embedding matrix is what must be materialized in full on every GPU.
        """
        return max(self.largest_decoder_layer_params, self.vocab_size * self.hidden_size)

    @cached_property
    def largest_decoder_layer_params(self) -> int:
        """Parameters of the largest decoder layer: attention, norms, and its MLP or
        experts (with the router)."""
        attn = sum(lin.params for lin in self._linears if lin.group == "attention")
        per_layer = (
            attn / self.num_layers + (self.norm_params + self.other_params) / self.num_layers
        )
        mlp = self._mlp_copy_params(self.intermediate_size, self.mlp_bias)
        if self.moe:
            e = self.moe
            moe_mlp = e.num_experts * self._mlp_copy_params(
                e.expert_intermediate_size, e.expert_bias
            )
            moe_mlp += e.num_shared_experts * self._mlp_copy_params(
                e.shared_intermediate_size or e.expert_intermediate_size, self.mlp_bias
            )
            moe_mlp += self.hidden_size * e.num_experts
            mlp = max(mlp if self.dense_layers else 0, moe_mlp)
        return int(per_layer + mlp)

    @cached_property
    def mlp_width_groups(self) -> tuple[tuple[int, int], ...]:
        """``(width, layers)`` pairs: the MLP width a token passes through and how many
        layers have it (the dense layers, then the MoE layers: k routed experts plus the
        shared ones). Two groups at most, whatever the depth: no per-layer list."""
        if self.moe is None:
            return ((self.intermediate_size, self.num_layers),)
        e = self.moe
        moe_width = e.experts_per_token * e.expert_intermediate_size + e.num_shared_experts * (
            e.shared_intermediate_size or e.expert_intermediate_size
        )
        groups: dict[int, int] = {}
        for width, layers in ((self.intermediate_size, self.dense_layers),
                              (moe_width, self.moe_layers)):
            if layers:
                groups[width] = groups.get(width, 0) + layers
        return tuple(groups.items())
