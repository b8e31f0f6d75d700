"""Recipe, subcommand and config names in launcher command lines: torchtune's recipes
(``lora_finetune_distributed``) and configs (``llama3_1/8B_lora``), litgpt's subcommands
(``finetune_lora``) and ``--quantize``, torchtitan's ``llama3_8b.toml`` and
``--model.flavor 8B``, and config files named by path (``ds_config_zero3.json``).

Handlers like :mod:`adapters.query.phrases` (scan state and word index in, words consumed
out). A file is never opened: its name says what it can (a DeepSpeed stage, FSDP, the
model of a torchtitan config), the way the config reader reads a DeepSpeed path
(:func:`adapters.trainconfig.mappings.deepspeed`); any other is refused with what to say.
"""

from __future__ import annotations

import re
from typing import Final

from adapters.query.errors import QueryError, error, quoted
from adapters.query.fields import FIELDS
from adapters.query.names import resolve_model, size_model
from adapters.query.numbers import SIZE_RE
from adapters.query.state import State
from adapters.query.tokenizer import FILE_NAME
from engine.choices import Framework, Method, ModelPick, Sharding

TUNE_EXAMPLE: Final = "tune run lora_finetune_distributed --config llama3_1/8B_lora 8x a100"
LITGPT_EXAMPLE: Final = "litgpt finetune_lora meta-llama/Meta-Llama-3.1-8B --devices 2 a100"
TITAN_EXAMPLE: Final = "torchtitan llama3_8b.toml 8x h100"


def recipe(s: State, i: int) -> int:
    """A recipe, subcommand, config name or file at word ``i``."""
    for read in (_tune_recipe, _litgpt, _quantize, _titan_model, _config_key, _file,
                 _tune_config_word):
        consumed = read(s, i)
        if consumed:
            return consumed
    return 0


# --- torchtune's recipes -------------------------------------------------------------------

_TUNE_RECIPES: Final[dict[str, tuple[Method | None, bool]]] = {
    "lora-finetune-single-device": (None, True),
    "lora-finetune-distributed": (None, False),
    "full-finetune-single-device": (Method.FULL, True),
    "full-finetune-distributed": (Method.FULL, False),
}
"""Recipe → (its method, None for adapters: LoRA, or QLoRA with a 4-bit config; whether
it runs on one card)."""
_DPO: Final = (
    "preference training (DPO) is not modeled, only supervised fine-tuning. DPO runs "
    "chosen and rejected sequences together beside a frozen reference (with LoRA the base "
    "serves): estimate it as the SFT recipe at twice the batch"
)
_RL: Final = (
    "reinforcement learning (PPO, GRPO) is not modeled, only supervised fine-tuning: "
    "estimate the policy's update as full_finetune_distributed, without the generation "
    "and the reward and reference models"
)
_KD: Final = (
    "knowledge distillation runs a teacher beside the student, which is not modeled: "
    "estimate the student's fine-tune (lora_finetune_single_device with its config)"
)
_QAT: Final = (
    "quantization-aware training (fake-quantized weights) is not modeled: estimate the "
    "fine-tune it wraps (full_finetune_distributed or lora_finetune_distributed)"
)
_REFUSED_RECIPES: Final = {
    **dict.fromkeys(("lora-dpo-single-device", "lora-dpo-distributed",
                     "full-dpo-distributed"), _DPO),
    **dict.fromkeys(("ppo-full-finetune-single-device", "grpo-full-finetune-distributed",
                     "async-grpo-full-finetune-distributed"), _RL),
    **dict.fromkeys(("knowledge-distillation-single-device",
                     "knowledge-distillation-distributed"), _KD),
    **dict.fromkeys(("qat-distributed", "qat-single-device", "qat-lora-finetune-distributed"),
                    _QAT),
}


def _recipe_key(low: str) -> str:
    """``dev/lora_finetune_distributed.py`` → ``lora-finetune-distributed``."""
    return low.rsplit("/", 1)[-1].removesuffix(".py")


def _tune_recipe(s: State, i: int) -> int:
    """``lora_finetune_distributed``, ``full_finetune_single_device``: torchtune, its
    method, and one card for a single-device recipe. DPO, PPO, GRPO, distillation and QAT
    recipes are refused with what to estimate instead."""
    key = _recipe_key(s.low(i))
    if key in _REFUSED_RECIPES:
        raise error(f'"{quoted(s.raw(i))}" is not a setting here: {_REFUSED_RECIPES[key]}.',
                    s.raw(i), example=TUNE_EXAMPLE)
    if key not in _TUNE_RECIPES:
        return 0
    method, single = _TUNE_RECIPES[key]
    word = s.raw(i)
    s.set("framework", Framework.TORCHTUNE, word)
    if method is None:
        s.launch.adapters = word
    else:
        s.set("method", method, word)
    if single:
        s.launch.counts.append((1, False, word))
    return 1


# --- litgpt -----------------------------------------------------------------------------------

_LITGPT_COMMANDS: Final = {"finetune-lora": None, "finetune-full": Method.FULL}
"""litgpt's subcommands: ``finetune_lora`` trains adapters (QLoRA with ``--quantize
bnb.nf4``), ``finetune_full`` every weight; ``finetune`` is its alias of finetune_lora."""
_ADAPTER: Final = (
    "litgpt's Adapter (LLaMA-Adapter: prompts learned on the top layers of a frozen base) "
    "is not modeled: ask for finetune_lora, the nearest a frozen base with small trained "
    "adapters gets"
)


def _litgpt(s: State, i: int) -> int:
    low, word = s.low(i), s.raw(i)
    if low == "litgpt" and s.low(i + 1) == "finetune":
        s.set("framework", Framework.LITGPT, s.raw(i, 2))
        s.launch.lora_default = s.raw(i, 2)
        return 2
    if low in ("finetune-adapter", "finetune-adapter-v2") or (
        low in ("adapter", "adapter-v2") and s.low(i - 1) == "finetune"
    ):
        raise error(f'"{quoted(word)}" is not a setting here: {_ADAPTER}.', word,
                    example=LITGPT_EXAMPLE)
    if low not in _LITGPT_COMMANDS:
        return 0
    s.set("framework", Framework.LITGPT, word)
    method = _LITGPT_COMMANDS[low]
    if method is None:
        s.launch.adapters = word
    else:
        s.set("method", method, word)
    return 1


_QUANTIZE: Final = {"bnb.nf4": False, "bnb.nf4-dq": True, "bnb.fp4": False, "bnb.fp4-dq": True}
"""litgpt's ``--quantize`` 4-bit bases (FP4 stores as many bits as NF4) and whether each
quantizes the scales again (``-dq``)."""


def _quantize(s: State, i: int) -> int:
    """litgpt's ``--quantize bnb.nf4``: a 4-bit base (QLoRA with finetune_lora)."""
    if s.low(i) != "quantize":
        return 0
    value, phrase = s.low(i + 1), s.raw(i, 2)
    if value in _QUANTIZE:
        s.four_bit = phrase
        s.set("double_quant", _QUANTIZE[value], phrase)
        return 2
    if value == "bnb.int8":
        problem = ("an 8-bit base (bitsandbytes' LLM.int8) is not modeled: say bnb.nf4 for "
                   "a 4-bit base, or leave --quantize out for a 16-bit one")
    else:
        problem = "litgpt's 4-bit bases are bnb.nf4, bnb.nf4-dq, bnb.fp4 and bnb.fp4-dq"
    raise error(f'"{quoted(phrase)}": {problem}.', phrase, example=LITGPT_EXAMPLE)


# --- torchtitan's model ------------------------------------------------------------------------


def _titan_model(s: State, i: int) -> int:
    """``--model.flavor 8B`` and ``--model.name llama3``: the model, once both are read
    (:func:`check_flavor`)."""
    low, nxt = s.low(i), s.low(i + 1)
    if low == "flavor" and SIZE_RE.match(nxt):
        s.launch.flavor = (nxt, s.raw(i, 2))
        return 2
    if low == "flavor" and i + 1 < len(s.words):
        raise error(f'"{quoted(s.raw(i, 2))}": only a flavor that is a size (8B, 70B, 405B) '
                    "names a model the catalog has.", s.raw(i + 1), example=TITAN_EXAMPLE)
    typed = s.raw(i).lower().lstrip("-")
    if low == "name" and typed.startswith("model.") and i + 1 < len(s.words):
        s.launch.family = (nxt, s.raw(i, 2))
        return 2
    if low == "name" and typed.startswith("optimizer."):
        return 1  # torchtitan's --optimizer.name AdamW: the optimizer's word is read next
    return 0


def check_flavor(s: State) -> None:
    """torchtitan's flavor is the model: of the family ``--model.name`` says, else the
    catalog's model of that size (as a bare ``8b`` is)."""
    flavor, family = s.launch.flavor, s.launch.family
    if flavor is None:
        if family is not None and "model" not in s.fields:
            raise error(f'"{quoted(family[1])}" needs its flavor: say --model.flavor 8B (or '
                        "70B, 405B).", family[1], example="torchtitan --model.flavor 8B 8x h100")
        return
    size, words = flavor
    if family is None:
        s.set("model", size_model(s.catalog, size, words), words)
        return
    said = f"{family[1]} {words}"
    found = resolve_model(s.catalog, f"{_dotted(family[0])}-{size}")
    if found is None:
        raise _not_in_catalog(said, f"{family[0]} {size}", size, TITAN_EXAMPLE)
    s.set("model", found, said)
    s.model_pick = ModelPick.EXACT


def _dotted(family: str) -> str:
    """``llama3-1`` (torchtune's ``llama3_1``) → ``llama3.1``."""
    return re.sub(r"(\d)-(\d)", r"\1.\2", family)


def _not_in_catalog(said: str, name: str, size: str, example: str) -> QueryError:
    return error(f'"{quoted(said)}" names {name}, which is not in the catalog: name the model, '
                 f'or its size ("{size} full 8x h100").', said, example=example)


# --- torchtune's configs -------------------------------------------------------------------------

TUNE_CONFIG: Final = re.compile(
    r"^(?:.*/)?(?P<family>[a-z][a-z0-9-]*)/(?P<size>[0-9]+(?:\.[0-9]+)?b|mini|medium|small)"
    r"-(?P<rest>[a-z0-9-]+?)(?:\.ya?ml)?$"
)
"""``llama3_1/8B_lora``, ``llama2/7B_qlora_single_device``, ``phi3/mini_lora``,
``recipes/configs/qwen2_5/7B_full.yaml`` (read with ``_`` as ``-``)."""
_CONFIG_METHODS: Final[dict[str, tuple[Method, bool]]] = {
    "lora": (Method.LORA, False), "qlora": (Method.QLORA, False), "full": (Method.FULL, False),
    "dora": (Method.LORA, True), "qdora": (Method.QLORA, True),
}
"""A config name's method word → (the method, DoRA)."""
_CONFIG_REFUSED: Final = {"dpo": _DPO, "ppo": _RL, "grpo": _RL, "kd": _KD, "qat": _QAT}


def _tune_config(s: State, i: int) -> bool:
    """``llama3_1/8B_lora``: torchtune, the model, the method (and DoRA), and one card for
    a ``_single_device`` config. False when the word is not a config's name."""
    match = TUNE_CONFIG.match(s.low(i))
    if match is None or resolve_model(s.catalog, s.low(i)):
        return False
    parts = match["rest"].split("-")
    single = parts[-2:] == ["single", "device"]
    parts = parts[:-2] if single else parts
    word = s.raw(i)
    for part in parts:
        if part in _CONFIG_REFUSED:
            raise error(f'"{quoted(word)}" is not a setting here: {_CONFIG_REFUSED[part]}.',
                        word, example=TUNE_EXAMPLE)
    if len(parts) != 1 or parts[0] not in _CONFIG_METHODS:
        return False
    family, size = _dotted(match["family"]), match["size"]
    model = resolve_model(s.catalog, f"{family}-{size}")
    if model is None:
        raise _not_in_catalog(word, f"{family} {size}", size if SIZE_RE.match(size) else "8b",
                              TUNE_EXAMPLE)
    method, dora = _CONFIG_METHODS[parts[0]]
    s.set("framework", Framework.TORCHTUNE, word)
    s.set("model", model, word)
    s.model_pick = ModelPick.EXACT
    s.set("method", method, word)
    if dora:
        s.set("dora", True, word)
    if single:
        s.launch.counts.append((1, False, word))
    return True


def _tune_config_word(s: State, i: int) -> int:
    return 1 if _tune_config(s, i) else 0


# --- files named in a command line ------------------------------------------------------------

_CONFIG_KEYS: Final = frozenset(
    {"config", "config-file", "deepspeed-config", "deepspeed-config-file"}
)
"""Keys a config's name follows (torchtune's ``--config``, accelerate's ``--config_file``,
DeepSpeed's ``--deepspeed_config``, torchtitan's ``--job.config_file``)."""
_DEEPSPEED_KEYS: Final = frozenset({"deepspeed", "ds", "deepspeed-config",
                                    "deepspeed-config-file", "use-deepspeed"})
_STAGE_IN_NAME: Final = re.compile(r"(?:^|[^a-z0-9])(?:zero|z|stage)-?([0-3])(?![0-9])")
"""A ZeRO stage in a file's name: ``zero3``, ``zero_3``, ``z3``, ``stage3``."""
_DDP_IN_NAME: Final = re.compile(r"(?:^|[^a-z0-9])(?:ddp|multi-gpu)(?:[^a-z0-9]|$)")
_QLORA_IN_NAME: Final = re.compile(r"(?:^|[^a-z0-9])qlora(?:[^a-z0-9]|$)")
"""``fsdp_qlora.yaml``, ``fsdp_config_qlora.yaml``: a launcher config for a 4-bit base."""
_BARE_CONFIG: Final = re.compile(r"^(?:ds|deepspeed)-[a-z0-9-]*config[a-z0-9-]*$")
"""``ds_z3_config``, ``ds_config_zero3``: a DeepSpeed config named without its ``.json``."""
_LAUNCHER_CONFIG: Final = re.compile(r"^(?:fsdp[12]?|fsdp-qlora|multi-gpu|ddp)$")
"""accelerate's example configs, which say only how a run launches (TRL's
``examples/accelerate_configs/fsdp2.yaml``)."""
_STAGES: Final = {"1": Sharding.ZERO1, "2": Sharding.ZERO2, "3": Sharding.ZERO3}
_TOML_RE: Final = re.compile(r"^(?P<family>[a-z][a-z0-9.-]*?)-(?P<size>[0-9]+(?:\.[0-9]+)?b)$")


def _config_key(s: State, i: int) -> int:
    """``--config`` before a config's name or a file: the key says nothing itself (a
    DeepSpeed key says DeepSpeed)."""
    if s.low(i) not in _CONFIG_KEYS:
        return 0
    nxt = s.low(i + 1)
    if not (FILE_NAME.search(nxt) or TUNE_CONFIG.match(nxt)):
        return 0
    if s.low(i).startswith("deepspeed"):
        s.deepspeed = s.raw(i)
    return 1


def _file(s: State, i: int) -> int:
    """A script (ignored: ``train.py``), a torchtitan ``.toml`` (its model), or a config
    whose name says its sharding; any other file is refused."""
    low = s.low(i)
    found = FILE_NAME.search(low)
    if found is None:
        if _BARE_CONFIG.match(low) and _STAGE_IN_NAME.search(low):
            return _launch_config(s, i, low)  # "--deepspeed ds_z3_config"
        return 0
    kind = found.group(1)
    name = low.rsplit("/", 1)[-1][: -len(kind) - 1]
    if kind in ("py", "sh"):
        return 1  # the script run says nothing; its options do
    if kind == "toml":
        return _titan_toml(s, i, name)
    if _tune_config(s, i):
        return 1
    return _launch_config(s, i, name)


def _titan_toml(s: State, i: int, name: str) -> int:
    """``llama3_8b.toml``: torchtitan's config of that model."""
    match = _TOML_RE.match(name)
    if match is None:
        raise _unopened(s.raw(i), "name the model (8b, llama-3.1-70b)", TITAN_EXAMPLE)
    model = resolve_model(s.catalog, f"{_dotted(match['family'])}-{match['size']}")
    if model is None:
        raise _not_in_catalog(s.raw(i), f"{match['family']} {match['size']}", match["size"],
                              TITAN_EXAMPLE)
    s.set("model", model, s.raw(i))
    s.model_pick = ModelPick.EXACT
    return 1


def _launch_config(s: State, i: int, name: str) -> int:
    """``ds_config_zero3.json``, ``deepspeed_zero2_offload.yaml``, and accelerate's
    ``fsdp.yaml``, ``multi_gpu.yaml``: the sharding (and offload) the name says."""
    word = s.raw(i)
    stage = _STAGE_IN_NAME.search(name)
    offload = "offload" in name
    # accelerate's own config (after --config_file, or named only for what it launches):
    # a training config named "qlora-fsdp-70b.yaml" says far more than its sharding
    launcher_config = s.low(i - 1) == "config-file" or bool(_LAUNCHER_CONFIG.match(name))
    if stage or "deepspeed" in name or s.low(i - 1) in _DEEPSPEED_KEYS:
        s.deepspeed = word  # without a stage, DeepSpeed asks for one
        if stage and stage.group(1) in _STAGES:
            s.set("sharding", _STAGES[stage.group(1)], word)
    elif "fsdp" in name and launcher_config:
        s.set("sharding", Sharding.FSDP, word)
    elif _DDP_IN_NAME.search(name) and launcher_config:
        s.set("sharding", Sharding.NONE, word)
        offload = False
    else:
        raise _unopened(word, 'say what it sets ("zero3", "fsdp", "bs 4", "seq 4096")',
                        FIELDS["sharding"].example)
    if offload:
        s.set("offload", True, word)
    if _QLORA_IN_NAME.search(name):
        s.four_bit = s.four_bit or word  # QLoRA, as a 4-bit word says it (check_four_bit)
    return 1


def _unopened(word: str, instead: str, example: str) -> QueryError:
    return error(f'"{quoted(word)}" is a file, and a query does not open files: {instead}, '
                 "or attach a training config to the message.", word, example=example)


def settle_model(s: State, i: int) -> int:
    """A model named by a path whose last parts are its id
    (``checkpoints/meta-llama/Llama-2-7b-hf``): 1 when read, else 0."""
    parts = s.low(i).split("/")
    for n in (2, 1):
        if len(parts) > n and (found := resolve_model(s.catalog, "/".join(parts[-n:]))):
            s.set("model", found, s.raw(i))
            s.model_pick = ModelPick.EXACT
            return 1
    return 0


WORDS: Final = frozenset().union(
    _TUNE_RECIPES, _REFUSED_RECIPES, _LITGPT_COMMANDS, _QUANTIZE, _CONFIG_KEYS,
    _CONFIG_METHODS, {"finetune", "finetune-adapter", "finetune-adapter-v2", "quantize",
                      "flavor", "name"},
)
"""The fixed words these handlers read, spelled as the tokenizer reads them."""
