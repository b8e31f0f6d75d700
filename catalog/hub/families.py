"""``config.json`` to the engine's architecture, for every family the engine models.

Pure: a parsed ``config.json`` (a dict) in, an :class:`~engine.architecture.Architecture`
out, read the way the entries of ``catalog/models.yaml`` were transcribed from the same
files, so parameter counts come from ``engine.architecture`` exactly as for the catalog.
:data:`FAMILIES` holds the readers below and, after them, the older plain-MLP families
of :mod:`catalog.hub.families_classic` (gpt2, opt, bloom, gpt_neox, gptj, phi, falcon),
whose docstring lists the fields those read. Typed, bounded field reads are
:class:`~catalog.hub.config_fields.Fields`.

=============  ===================================================================
model_type     fields read (besides hidden_size, num_hidden_layers,
               num_attention_heads, num_key_value_heads, head_dim,
               intermediate_size, vocab_size, tie_word_embeddings)
=============  ===================================================================
llama          attention_bias (q/k/v/o), mlp_bias
mistral        (no biases)
mixtral        num_local_experts, num_experts_per_tok; every layer MoE, experts of
               intermediate_size
qwen2          q/k/v bias always (Qwen2 hard-codes it)
qwen2_moe      + num_experts, num_experts_per_tok, moe_intermediate_size,
               shared_expert_intermediate_size (one gated shared expert),
               decoder_sparse_step, mlp_only_layers
qwen3          attention_bias, per-head q/k RMSNorm, head_dim (default 128)
qwen3_moe      + num_experts, num_experts_per_tok, moe_intermediate_size,
               decoder_sparse_step, mlp_only_layers (no shared expert)
gemma          Gemma 1: attention_bias, head_dim (default 256), tied by default
gemma2         four RMSNorms per layer, head_dim (default 256), tied by default,
               final_logit_softcapping (whether set; Gemma 3 sets null)
gemma3         text_config (multimodal checkpoints) or top level (gemma3_text):
               as gemma2 plus per-head q/k norm; missing text fields take
               transformers' Gemma3TextConfig defaults, as transformers does
phi3           Phi-3 / Phi-3.5-mini / Phi-4 (fused qkv/gate_up: same count)
deepseek_v3    MLA (q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
               v_head_dim), n_routed_experts, n_shared_experts, num_experts_per_tok,
               moe_intermediate_size, first_k_dense_replace, moe_layer_freq,
               topk_method (noaux_tc: per-expert correction bias); the
               multi-token-prediction layers are not counted (as in the catalog)
gpt_oss        num_local_experts, num_experts_per_tok, biases on every linear,
               router bias, one attention-sink logit per head and layer
olmo2          attention_bias, full-width q/k RMSNorm, post-norms
=============  ===================================================================

Fields transformers would default are defaulted the same way where the default is the
family's convention (``num_key_value_heads`` = heads, ``tie_word_embeddings``, biases);
the sizes that define a model are required, and a config without them is an error
naming each missing field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic import ValidationError

from catalog.echo import one_line
from catalog.hub.bounds import MAX_PARAMS
from catalog.hub.config_fields import (
    CORE_FIELDS,
    FamilyReader,
    Fields,
    Read,
    attention_bias,
    decoder_fields,
)
from catalog.hub.errors import HubError, HubErrorKind
from catalog.hub.families_classic import CLASSIC_FAMILIES
from catalog.hub.ref import HubRef
from engine.architecture import MLA, Architecture, MoE

GEMMA3_TEXT_DEFAULTS: Final[Mapping[str, Any]] = {
    "vocab_size": 262_208,
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "tie_word_embeddings": True,
    "attention_bias": False,
}
"""``transformers.Gemma3TextConfig``'s defaults: Google's multimodal Gemma 3 configs
leave most of ``text_config`` to them (gemma-3-4b lists only hidden_size,
intermediate_size, num_hidden_layers)."""


@dataclass(frozen=True, slots=True)
class Mapped:
    """What a config says: the architecture and the facts worth telling about it."""

    model_type: str
    architecture: Architecture
    dtype: str | None
    """``torch_dtype`` (or ``dtype``) of the checkpoint, e.g. ``bfloat16``."""
    quantization: str | None
    """``quantization_config.quant_method`` when the checkpoint is quantized."""
    multimodal: bool = False
    """True when only the language model of a multimodal checkpoint is modelled."""
    notes: tuple[str, ...] = field(default_factory=tuple)


# --- shared pieces --------------------------------------------------------------


def layer_split(layers: int, moe_count: int, first_moe: int | None) -> tuple[int, bool]:
    """How many of ``layers`` keep a dense MLP, and whether they are the leading ones,
    from the number of MoE layers and the index of the first: the MoE layers fill
    ``first_moe..layers-1`` exactly when the dense ones lead. Arithmetic, no per-layer
    list, so its cost does not grow with the depth a config claims."""
    leading = first_moe is None or layers - first_moe == moe_count
    return layers - moe_count, leading


def _layout_note(dense: int, leading: bool, layers: int) -> tuple[str, ...]:
    if dense == 0 or leading:
        return ()
    return (
        f"{dense} of {layers} layers keep a dense MLP (not the leading ones); they are "
        "counted as dense layers, which gives the same parameter count.",
    )


def qwen_moe_layers(layers: int, step: int, mlp_only: set[int]) -> tuple[int, bool]:
    """Qwen-MoE: layer i is MoE unless listed in ``mlp_only_layers`` or off the
    ``decoder_sparse_step`` grid, ``(i + 1) % step == 0`` (transformers'
    Qwen2MoeDecoderLayer rule). Returns :func:`layer_split`'s pair."""
    on_grid = [i for i in mlp_only if 0 <= i < layers and (i + 1) % step == 0]
    moe_count = layers // step - len(on_grid)
    first = step - 1
    while first < layers and first in mlp_only:  # at most len(mlp_only) steps
        first += step
    return layer_split(layers, moe_count, first if first < layers else None)


def deepseek_moe_layers(layers: int, first_dense: int, freq: int) -> tuple[int, bool]:
    """DeepSeek-V3: layer i is MoE when ``i >= first_k_dense_replace`` and
    ``i % moe_layer_freq == 0`` (transformers' DeepseekV3DecoderLayer rule). Returns
    :func:`layer_split`'s pair."""
    first = -(-first_dense // freq) * freq  # the first multiple of freq at or after it
    if first >= layers:
        return layer_split(layers, 0, None)
    return layer_split(layers, (layers - 1 - first) // freq + 1, first)


def _qwen_moe_layers(f: Fields, layers: int) -> tuple[int, bool]:
    step = f.int("decoder_sparse_step", default=1)
    assert step is not None
    return qwen_moe_layers(layers, step, set(f.int_list("mlp_only_layers")))


def _moe_arch(
    base: dict[str, Any], moe: MoE, dense: int, leading: bool
) -> Read:
    layers = base["num_layers"]
    if dense >= layers:
        return base, ("The config names experts but no layer uses them: modelled as dense.",)
    moe = moe.model_copy(update={"first_dense_layers": dense})
    return {**base, "moe": moe}, _layout_note(dense, leading, layers)


# --- families -------------------------------------------------------------------


def _llama(f: Fields) -> Read:
    f.require("llama", *CORE_FIELDS)
    arch = decoder_fields(f, tie_default=False)
    return {**arch, **attention_bias(f), "mlp_bias": f.bool("mlp_bias", False)}, ()


def _mistral(f: Fields) -> Read:
    f.require("mistral", *CORE_FIELDS)
    return decoder_fields(f, tie_default=False), ()


def _phi3(f: Fields) -> Read:
    f.require("phi3", *CORE_FIELDS)
    return decoder_fields(f, tie_default=False), ()


def _qwen2(f: Fields) -> Read:
    f.require("qwen2", *CORE_FIELDS)
    return {**decoder_fields(f, tie_default=False), "qkv_bias": True}, ()


def _qwen3(f: Fields) -> Read:
    f.require("qwen3", *CORE_FIELDS)
    arch = decoder_fields(f, tie_default=False, head_dim_default=128)
    return {**arch, **attention_bias(f), "qk_norm": "head"}, ()


def _mixtral(f: Fields) -> Read:
    f.require("mixtral", *CORE_FIELDS, "num_local_experts", "num_experts_per_tok")
    base = decoder_fields(f, tie_default=False)
    moe = MoE(
        num_experts=f.need("num_local_experts"),
        experts_per_token=f.need("num_experts_per_tok"),
        expert_intermediate_size=base["intermediate_size"],
    )
    return _moe_arch(base, moe, 0, True)


def _qwen2_moe(f: Fields) -> Read:
    f.require(
        "qwen2_moe", *CORE_FIELDS, "num_experts", "num_experts_per_tok",
        "moe_intermediate_size", "shared_expert_intermediate_size",
    )
    base = {**decoder_fields(f, tie_default=False), "qkv_bias": f.bool("qkv_bias", True)}
    experts = f.need("num_experts")
    shared = f.int("shared_expert_intermediate_size", minimum=0) or 0
    moe = MoE(
        num_experts=experts,
        experts_per_token=f.need("num_experts_per_tok"),
        expert_intermediate_size=f.need("moe_intermediate_size"),
        num_shared_experts=1 if shared else 0,
        shared_intermediate_size=shared or None,
        shared_expert_gate=bool(shared),
    )
    return _moe_arch(base, moe, *_qwen_moe_layers(f, base["num_layers"]))


def _qwen3_moe(f: Fields) -> Read:
    f.require(
        "qwen3_moe", *CORE_FIELDS, "num_experts", "num_experts_per_tok",
        "moe_intermediate_size",
    )
    base = {
        **decoder_fields(f, tie_default=False, head_dim_default=128),
        **attention_bias(f),
        "qk_norm": "head",
    }
    experts = f.need("num_experts")
    moe = MoE(
        num_experts=experts,
        experts_per_token=f.need("num_experts_per_tok"),
        expert_intermediate_size=f.need("moe_intermediate_size"),
    )
    return _moe_arch(base, moe, *_qwen_moe_layers(f, base["num_layers"]))


def _gemma(f: Fields) -> Read:
    f.require("gemma", *CORE_FIELDS)
    return {**decoder_fields(f, tie_default=True, head_dim_default=256), **attention_bias(f)}, ()


def _gemma2(f: Fields) -> Read:
    f.require("gemma2", *CORE_FIELDS)
    arch = decoder_fields(f, tie_default=True, head_dim_default=256)
    return {**arch, **attention_bias(f), "norms_per_layer": 4, **_softcap(f)}, ()


def _gemma3_text(f: Fields) -> Read:
    f.require("gemma3", *CORE_FIELDS)
    arch = decoder_fields(f, tie_default=True, head_dim_default=256)
    return {**arch, **attention_bias(f), "norms_per_layer": 4, "qk_norm": "head",
            **_softcap(f)}, ()


def _softcap(f: Fields) -> dict[str, bool]:
    """``final_logit_softcapping`` set (Gemma 2: 30.0; Gemma 3: null): only whether the
    logits are capped is read, never the cap itself."""
    return {"logit_softcap": f.get("final_logit_softcapping") is not None}


def _deepseek_v3(f: Fields) -> Read:
    f.require(
        "deepseek_v3", *CORE_FIELDS, "moe_intermediate_size", "n_routed_experts",
        "num_experts_per_tok", "n_shared_experts", "first_k_dense_replace",
        "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
    )
    base = decoder_fields(f, tie_default=False)
    base.pop("head_dim", None)
    base["o_bias"] = f.bool("attention_bias", False)
    base["mla"] = MLA(
        q_lora_rank=f.int("q_lora_rank"),
        kv_lora_rank=f.need("kv_lora_rank"),
        qk_nope_head_dim=f.need("qk_nope_head_dim"),
        qk_rope_head_dim=f.need("qk_rope_head_dim"),
        v_head_dim=f.need("v_head_dim"),
    )
    experts = f.need("n_routed_experts")
    first = f.int("first_k_dense_replace", minimum=0) or 0
    freq = f.int("moe_layer_freq", default=1)
    assert freq is not None
    moe = MoE(
        num_experts=experts,
        experts_per_token=f.need("num_experts_per_tok"),
        expert_intermediate_size=f.need("moe_intermediate_size"),
        num_shared_experts=f.int("n_shared_experts", minimum=0) or 0,
        router_correction_bias=(f.text("topk_method") or "noaux_tc") == "noaux_tc",
    )
    dense, leading = deepseek_moe_layers(base["num_layers"], first, freq)
    arch, notes = _moe_arch(base, moe, dense, leading)
    mtp = f.int("num_nextn_predict_layers", default=0, minimum=0) or 0
    if mtp:
        layers = f"{mtp} multi-token-prediction layers are" if mtp > 1 else (
            "multi-token-prediction layer is"
        )
        notes += (
            f"The checkpoint's {layers} not counted (num_nextn_predict_layers): "
            "fine-tuning does not train them.",
        )
    return arch, notes


def _gpt_oss(f: Fields) -> Read:
    f.require("gpt_oss", *CORE_FIELDS, "num_local_experts")
    base = {
        **decoder_fields(f, tie_default=False, head_dim_default=64),
        **attention_bias(f),
        "attention_sinks": True,
    }
    per_token = f.int("num_experts_per_tok") or f.int("experts_per_token")
    if per_token is None:
        f.require("gpt_oss", "num_experts_per_tok")
    assert per_token is not None
    moe = MoE(
        num_experts=f.need("num_local_experts"),
        experts_per_token=per_token,
        expert_intermediate_size=base["intermediate_size"],
        router_bias=True,
        expert_bias=True,
    )
    return _moe_arch(base, moe, 0, True)


def _olmo2(f: Fields) -> Read:
    f.require("olmo2", *CORE_FIELDS)
    return {**decoder_fields(f, tie_default=False), **attention_bias(f), "qk_norm": "full"}, ()


FAMILIES: Final[dict[str, FamilyReader]] = {
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "qwen2": _qwen2,
    "qwen2_moe": _qwen2_moe,
    "qwen3": _qwen3,
    "qwen3_moe": _qwen3_moe,
    "gemma": _gemma,
    "gemma2": _gemma2,
    "gemma3": _gemma3_text,
    "gemma3_text": _gemma3_text,
    "phi3": _phi3,
    "deepseek_v3": _deepseek_v3,
    "gpt_oss": _gpt_oss,
    "olmo2": _olmo2,
    **CLASSIC_FAMILIES,
}
SUPPORTED: Final = tuple(FAMILIES)
"""``model_type`` values the resolver reads (``gemma3_text`` is Gemma 3's text-only form)."""


def _supported_text() -> str:
    return ", ".join(t for t in SUPPORTED if t != "gemma3_text")


def _dtype(config: Mapping[str, Any], text: Mapping[str, Any]) -> str | None:
    for source in (config, text):
        for key in ("torch_dtype", "dtype"):
            value = source.get(key)
            if isinstance(value, str):
                return value.removeprefix("torch.")
    return None


def map_config(config: Any, ref: HubRef) -> Mapped:
    """Read a parsed ``config.json``; :class:`HubError` names what cannot be read."""
    if not isinstance(config, dict):
        raise HubError(
            HubErrorKind.MALFORMED,
            f"config.json of {ref.id} is not a JSON object, so it is not a transformers "
            "config. Point at a model repository (org/name) whose config.json describes "
            "the model.",
            ref.id,
        )
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise HubError(
            HubErrorKind.MISSING_FIELDS,
            f"config.json of {ref.id} has no model_type, so its architecture family is "
            f"unknown. Supported: {_supported_text()}.",
            ref.id,
        )
    reader = FAMILIES.get(model_type)
    if reader is None:
        raise HubError(
            HubErrorKind.UNSUPPORTED,
            f"model_type '{one_line(model_type)}' ({ref.id}) is not supported yet; supported: "
            f"{_supported_text()}. For now, pick a catalog model of similar size "
            "(`models` lists them) or a bare size such as 8b.",
            ref.id,
        )
    text: Mapping[str, Any] = config
    fields = Fields(config, ref)
    multimodal = False
    notes: tuple[str, ...] = ()
    if model_type == "gemma3":
        nested = config.get("text_config")
        if not isinstance(nested, dict):
            raise HubError(
                HubErrorKind.MISSING_FIELDS,
                f"config.json of {ref.id} (model_type gemma3) lacks text_config, which "
                "describes its language model. Point at the original Gemma 3 repository.",
                ref.id,
            )
        text = nested
        multimodal = "vision_config" in config
        fields = Fields(nested, ref, "config.json's text_config", GEMMA3_TEXT_DEFAULTS)
    elif model_type == "gemma3_text":
        fields = Fields(config, ref, defaults=GEMMA3_TEXT_DEFAULTS)
    try:
        values, family_notes = reader(fields)  # builds the MoE / MLA parts, which check
    except ValidationError as exc:
        raise _impossible(ref, exc) from exc
    if fields.defaulted:
        listed = ", ".join(f"{n} {GEMMA3_TEXT_DEFAULTS[n]:,}" for n in fields.defaulted
                           if not isinstance(GEMMA3_TEXT_DEFAULTS[n], bool))
        if listed:
            notes += (f"{fields.where} leaves {listed} to transformers' Gemma 3 defaults.",)
    if multimodal:
        notes += (
            "Multimodal checkpoint: the language model is modelled; the vision encoder "
            "(vision_config) is not included.",
        )
    notes += family_notes
    try:
        architecture = Architecture.model_validate(values)
    except ValidationError as exc:
        raise _impossible(ref, exc) from exc
    if architecture.total_params > MAX_PARAMS:
        raise HubError(
            HubErrorKind.TOO_LARGE,
            f"config.json of {ref.id} describes {architecture.total_params / 1e12:,.0f} T "
            f"parameters, more than any real model has (ftcost accepts up to "
            f"{MAX_PARAMS / 1e12:,.0f} T). The config is broken or not a real model; try "
            "another revision (org/name@rev) or the original repository.",
            ref.id,
        )
    quant = config.get("quantization_config")
    method = quant.get("quant_method") if isinstance(quant, dict) else None
    return Mapped(
        model_type=model_type,
        architecture=architecture,
        dtype=_dtype(config, text),
        quantization=one_line(str(method)) if method else ("quantized" if quant else None),
        multimodal=multimodal,
        notes=notes,
    )


def _impossible(ref: HubRef, exc: ValidationError) -> HubError:
    """The error for a config whose numbers describe no model that can exist."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    where = f"{where}: " if where else ""
    return HubError(
        HubErrorKind.MALFORMED,
        f"config.json of {ref.id} describes an impossible model ({where}{err['msg']}). "
        "Try another revision or the original repository.",
        ref.id,
    )
