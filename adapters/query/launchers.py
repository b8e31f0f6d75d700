"""Launcher command lines as ML engineers paste them: torchrun, deepspeed, accelerate
launch, litgpt's and Lightning's ``--devices``, torchtitan's data-parallel degrees, and
the options of each that set the cards, the sharding or the precision.

Recipe and config names (torchtune's, litgpt's subcommands, torchtitan's ``.toml``
files, DeepSpeed's JSON) are read by :mod:`adapters.query.recipes`. Both hold handlers
like :mod:`adapters.query.phrases` (scan state and word index in, words consumed out);
what needs every word read first (card counts against each other and the nodes, a
recipe's method, torchtitan's flavor) is settled by :func:`check_launch`.
"""

from __future__ import annotations

import re
from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.fields import FIELDS
from adapters.query.numbers import read_number, whole
from adapters.query.recipes import check_flavor, settle_model
from adapters.query.state import State
from adapters.query.vocabulary import KEYWORDS
from engine.choices import Framework, Method, Precision, Sharding, StatePrecision

COUNT_EXAMPLE: Final = "8b full fsdp torchrun --nproc_per_node 8 h100"

# --- words that start a run and say nothing of it -------------------------------------

_LAUNCHERS: Final = frozenset(
    {"torchrun", "torch.distributed.run", "torch.distributed.launch", "python", "python3"}
)
"""Launchers that run any script (``tune run`` is two filler words already; ``deepspeed``
is DeepSpeed's own, read by :func:`adapters.query.phrases.deepspeed`)."""
_IGNORED: Final = frozenset(
    {"standalone",  # torchrun: one node, a local rendezvous
     "zero3-init-flag",  # accelerate: how ZeRO-3 builds the model, not what it holds
     "fsdp-cpu-ram-efficient-loading", "fsdp-sync-module-states"}  # loading only
)
"""Switches that change nothing the estimate models (``true`` after one is read with it)."""
_IGNORED_WITH_VALUE: Final = frozenset(
    {# where the processes meet and which of them this is
     "master-addr", "master-port", "node-rank", "machine-rank", "main-process-ip",
     "main-process-port", "rdzv-backend", "rdzv-endpoint", "rdzv-id", "max-restarts",
     "hostfile", "num-cpu-threads-per-process",
     # where a run writes
     "out-dir", "output-dir", "log-dir", "logging-dir",
     # how FSDP wraps, saves and prefetches (not what a card holds), and its version
     "fsdp-auto-wrap-policy", "fsdp-transformer-layer-cls-to-wrap", "fsdp-state-dict-type",
     "fsdp-backward-prefetch", "fsdp-version", "fsdp-min-num-params",
     "max-norm",  # torchtitan's gradient clipping
     # how a script logs, saves and schedules (HF's arguments)
     "report-to", "run-name", "save-strategy", "eval-strategy", "evaluation-strategy",
     "logging-strategy", "save-total-limit", "lr-scheduler-type", "dataloader-num-workers",
     "hub-model-id",
     # which column or dataset a script reads (the size is what counts: tokens, samples)
     "dataset-text-field", "dataset-name", "dataset-config-name"}
)
"""Options whose value changes nothing the estimate models: read with their value."""
_MODEL_KEYS: Final = frozenset(
    {"model-name-or-path", "pretrained-model-name-or-path", "base-model", "model-id",
     "checkpoint-dir"}
)
"""Keys a model follows (HF's ``--model_name_or_path``, axolotl's ``base_model``, litgpt's
older ``--checkpoint_dir checkpoints/meta-llama/Llama-2-7b-hf``)."""


def launcher(s: State, i: int) -> int:
    """Launcher words, card counts, and the options that set sharding and precision."""
    for read in (_says_nothing, _count, _shard_degree, _sharding_option, _precision,
                 _model_key):
        consumed = read(s, i)
        if consumed:
            return consumed
    return 0


def _says_nothing(s: State, i: int) -> int:
    low = s.low(i)
    if low == "accelerate" and s.low(i + 1) == "launch":
        s.launch.hf_launcher = s.raw(i, 2)  # hf, unless a framework is said
        return 2
    if s.raw(i).lower() == "-m" and i + 1 < len(s.words):
        return _module(s, i)
    if low in _LAUNCHERS or low in _IGNORED:
        return 1
    if low in _IGNORED_WITH_VALUE:
        return 2 if i + 1 < len(s.words) else 1
    return 0


def _module(s: State, i: int) -> int:
    """``-m torch.distributed.run``, ``-m axolotl.cli.train``: a module run as a script
    says nothing, but one of a framework the language names says that framework."""
    package = s.low(i + 1).split(".", 1)[0]
    found = KEYWORDS.get(package)
    if found is not None and found[0] == "framework":
        s.set("framework", found[1], s.raw(i, 2))
    return 2


# --- card counts ---------------------------------------------------------------------

_PER_NODE_COUNTS: Final = frozenset({"nproc-per-node", "num-gpus", "devices", "gpus-per-node"})
"""torchrun's ``--nproc_per_node``, the deepspeed launcher's ``--num_gpus``, Lightning's
and litgpt's ``--devices``: cards on each node (times ``--nnodes`` / ``--num_nodes``)."""
_TOTAL_COUNTS: Final = frozenset({"num-processes", "world-size"})
"""accelerate's ``--num_processes``: cards over all the machines."""
_WHOLE_NODE: Final = frozenset({"gpu", "auto", "-1"})
"""torchrun's ``--nproc_per_node gpu`` / ``auto`` and Lightning's ``--devices -1``: every
card the node has."""


def _count(s: State, i: int) -> int:
    low = s.low(i)
    if low == "cuda-visible-devices":
        return _visible_devices(s, i)
    per_node = low in _PER_NODE_COUNTS
    if not per_node and low not in _TOTAL_COUNTS:
        return 0
    value = s.low(i + 1)
    if value in _WHOLE_NODE:
        s.launch.node_cards = s.raw(i, 2)
        return 2
    num = read_number(value)
    phrase = s.raw(i, 2)
    if num is None:
        raise error(f'"{quoted(s.raw(i))}" needs a card count, e.g. "{s.raw(i)} 8".',
                    s.raw(i), example=COUNT_EXAMPLE)
    if num.is_price or num.percent or num.suffix:
        raise error(f'"{quoted(phrase)}" must be a plain count of cards.', s.raw(i + 1),
                    example=COUNT_EXAMPLE)
    count = whole(num.value, s.raw(i + 1), "gpu_count")
    if count < 1:
        raise error(f'"{quoted(phrase)}": a launcher starts at least one card.',
                    s.raw(i + 1), example=COUNT_EXAMPLE)
    s.launch.counts.append((count, per_node, phrase))
    return 2


_DEVICE_IDS: Final = re.compile(r"^[0-9]{1,4}(?:,[0-9]{1,4})*$")
"""The card ids the tokenizer keeps as one word (``0,1,2,3``)."""


def _visible_devices(s: State, i: int) -> int:
    """``CUDA_VISIBLE_DEVICES=0,1,2,3``: the cards a node's processes see (4 here)."""
    ids = s.low(i + 1)
    if not _DEVICE_IDS.match(ids):
        raise error(f'"{quoted(s.raw(i))}" needs the cards\' ids, e.g. '
                    '"CUDA_VISIBLE_DEVICES=0,1,2,3".', s.raw(i), example=COUNT_EXAMPLE)
    s.launch.counts.append((len(set(ids.split(","))), True, s.raw(i, 2)))
    return 2


# --- torchtitan's data-parallel shard degree --------------------------------------------

_SHARD_KEYS: Final = frozenset(
    {"data-parallel-shard-degree", "dp-shard", "dp-shard-degree", "dp-shard-size",
     "data-parallel-shard-dim"}
)
"""torchtitan's ``data_parallel_shard_degree``, axolotl's ``dp_shard_size``, torchtune's
``data_parallel_shard_dim``: FSDP over that many ranks (-1: every rank left)."""
SHARD_EXAMPLE: Final = "8b full torchtitan --parallelism.data_parallel_shard_degree 8 h100"


def _shard_degree(s: State, i: int) -> int:
    if s.low(i) not in _SHARD_KEYS or (num := read_number(s.low(i + 1))) is None:
        return 0
    phrase, word = s.raw(i, 2), s.raw(i + 1)
    if num.is_price or num.percent or num.suffix:
        raise error(f'"{quoted(phrase)}" must be a plain count of ranks.', word,
                    example=SHARD_EXAMPLE)
    degree = whole(num.value, word, "gpu_count")
    if degree < 1 and degree != -1:
        raise error(f'"{quoted(phrase)}": the shard degree is a count of ranks, or -1 for '
                    "every rank the other degrees leave.", word, example=SHARD_EXAMPLE)
    if s.launch.shard is not None and s.launch.shard[0] != degree:
        raise error(f'"{quoted(phrase)}" conflicts with "{quoted(s.launch.shard[1])}": both '
                    "set the shard degree. Pick one.", word, example=SHARD_EXAMPLE)
    s.launch.shard = (degree, phrase)
    return 2


# --- sharding options ------------------------------------------------------------------

_STRATEGY_KEYS: Final = frozenset({"fsdp-sharding-strategy", "sharding-strategy"})
_STRATEGY_NAMES: Final = frozenset(
    {"full-shard", "shard-grad-op", "hybrid-shard", "no-shard", "hybrid-shard-zero2"}
)
"""FSDP's strategies as accelerate writes them: read by the keywords already
(adapters/query/vocabulary.py, as the config reader maps a config's ``fsdp``)."""
_STRATEGY_NUMBERS: Final = {
    "1": Sharding.FSDP, "2": Sharding.ZERO2, "3": Sharding.NONE, "4": Sharding.HSDP,
}
"""torch's ``ShardingStrategy`` values, as older accelerate configs write them (5,
``_HYBRID_SHARD_ZERO2``, is refused as the name is)."""
_STAGES: Final = {"1": Sharding.ZERO1, "2": Sharding.ZERO2, "3": Sharding.ZERO3}
_OFFLOAD_DEVICES: Final = frozenset({"cpu", "nvme"})


def _sharding_option(s: State, i: int) -> int:
    """accelerate's ``--fsdp_sharding_strategy``, ``--use_deepspeed --zero_stage 3``,
    ``--offload_optimizer_device cpu`` / ``--offload_param_device cpu``, ``--multi_gpu``."""
    low, nxt = s.low(i), s.low(i + 1)
    if low in _STRATEGY_KEYS:
        if nxt in _STRATEGY_NAMES:
            return 1  # the strategy's own word is read next
        if nxt == "5":
            raise error(f'"{quoted(s.raw(i, 2))}" (FSDP\'s _HYBRID_SHARD_ZERO2) is not '
                        "modeled: say hsdp for HYBRID_SHARD or zero2 for SHARD_GRAD_OP.",
                        s.raw(i + 1), example="70b full hsdp 2 nodes of 8x h100")
        if nxt not in _STRATEGY_NUMBERS:
            raise error(f'"{quoted(s.raw(i))}" needs FSDP\'s strategy: FULL_SHARD, '
                        "SHARD_GRAD_OP, HYBRID_SHARD or NO_SHARD.", s.raw(i),
                        example="8b full fsdp_sharding_strategy FULL_SHARD 8x a100")
        s.set("sharding", _STRATEGY_NUMBERS[nxt], s.raw(i, 2), s.raw(i + 1))
        return 2
    if low == "use-deepspeed":
        s.deepspeed = s.raw(i)
        return 1
    if low == "zero-stage" and nxt in (*_STAGES, "0"):
        s.deepspeed = s.raw(i, 2)  # stage 0 (no ZeRO) is asked for a stage
        if nxt in _STAGES:
            s.set("sharding", _STAGES[nxt], s.raw(i, 2))
        return 2
    if low in ("offload-optimizer-device", "offload-param-device") and i + 1 < len(s.words):
        if nxt in _OFFLOAD_DEVICES and low == "offload-param-device":
            s.set("offload_weights", True, s.raw(i, 2))
        elif nxt in _OFFLOAD_DEVICES:
            s.set("offload", True, s.raw(i, 2))
            s.launch.optimizer_offload = s.raw(i, 2)
        return 2  # "none": nothing offloaded
    if low == "multi-gpu":
        s.launch.ddp = s.raw(i)
        return 1
    return 0


# --- precision ---------------------------------------------------------------------------

_LIGHTNING_PRECISION: Final[dict[str, tuple[tuple[str, object], ...]]] = {
    "bf16-mixed": (("precision", Precision.BF16), ("state_precision", StatePrecision.FP32)),
    "16-mixed": (("precision", Precision.FP16), ("state_precision", StatePrecision.FP32)),
    "16": (("precision", Precision.FP16), ("state_precision", StatePrecision.FP32)),
    "32-true": (("precision", Precision.FP32),),
    "32": (("precision", Precision.FP32),),
    # Lightning's Transformer Engine plugin: FP8 matmuls on 16-bit weights
    "transformer-engine": (("float8", True),),
    "transformer-engine-float16": (("float8", True), ("precision", Precision.FP16)),
}
"""Lightning's and litgpt's ``--precision`` values (``bf16-true`` is a keyword: weights,
gradients and states in BF16). ``-mixed`` keeps FP32 master weights and states."""


_PRECISION_WORDS: Final = frozenset(
    word for word, (field, _) in KEYWORDS.items() if field in ("precision", "state_precision")
)


def _precision(s: State, i: int) -> int:
    """litgpt's ``--precision bf16-true``, accelerate's ``--mixed_precision no`` / ``fp8``."""
    low, nxt, phrase = s.low(i), s.low(i + 1), s.raw(i, 2)
    if low == "mixed-precision" and nxt in ("no", "fp8"):
        if nxt == "no":  # no autocast: the run trains in FP32
            s.set("precision", Precision.FP32, phrase)
        else:  # accelerate's FP8 (Transformer Engine, torchao): FP8 matmuls
            s.set("float8", True, phrase)
            s.set("state_precision", StatePrecision.FP32, phrase)
        return 2
    if low != "precision":
        return 0
    if nxt in _PRECISION_WORDS or s.low(i - 1) in _PRECISION_WORDS:
        return 1  # "precision bf16", "bf16 precision": the keyword says it
    settings = _LIGHTNING_PRECISION.get(nxt)
    if settings is None:
        raise error(
            f'"{quoted(s.raw(i, 2 if i + 1 < len(s.words) else 1))}": the precisions read are '
            "bf16, fp16, fp32, bf16-true (weights and states in BF16), bf16-mixed, 16-mixed "
            "and 32-true; pure FP16 (16-true) and FP64 are not modeled.", s.raw(i),
            example="8b lora litgpt --precision bf16-true 2x a100",
        )
    for field, value in settings:
        s.set(field, value, phrase)
    return 2


# --- keys a model follows ----------------------------------------------------------------


def _model_key(s: State, i: int) -> int:
    """``--model_name_or_path meta-llama/Llama-3.1-8B``: the key says nothing; the model
    is read next, or here from a path's last parts (``checkpoints/meta-llama/...``)."""
    if s.low(i) not in _MODEL_KEYS:
        return 0
    return 1 + settle_model(s, i + 1)


# --- once every word is read -------------------------------------------------------------


def check_launch(s: State) -> None:
    """Settle what launcher and recipe words said: torchtitan's model flavor, a recipe's
    method, the shard degree's sharding and cards, the card counts against each other
    and against the cards and nodes the query names, and ``--multi_gpu``'s DDP. Runs
    before the nodes are counted (:func:`adapters.query.phrases.check_nodes`)."""
    launch = s.launch
    check_flavor(s)
    _check_method(s)
    totals = [_launch_total(s, count, per_node, words)
              for count, per_node, words in launch.counts]
    if launch.shard is not None:
        totals += _shard_total(s, *launch.shard)
    for total, words, how in totals:
        _check_total(s, total, words, how)
    if launch.node_cards is not None and "gpu_count" not in s.fields:
        raise error(
            f'"{quoted(launch.node_cards)}" starts every card the node has, which a query '
            'does not show: name the count ("--nproc_per_node 8" or "8x h100").',
            launch.node_cards, example=COUNT_EXAMPLE,
        )
    if launch.ddp is not None and "sharding" not in s.fields and s.deepspeed is None:
        s.set("sharding", Sharding.NONE, launch.ddp)
    if launch.optimizer_offload is not None and "offload_weights" not in s.fields:
        s.set("offload_weights", False, launch.optimizer_offload)
    if launch.hf_launcher is not None and "framework" not in s.fields:
        s.set("framework", Framework.HF, launch.hf_launcher)


def _check_method(s: State) -> None:
    launch = s.launch
    method = s.fields.get("method")
    if launch.adapters is not None and method is Method.FULL:
        raise error(
            f'"{quoted(launch.adapters)}" trains LoRA adapters, but '
            f'"{quoted(s.sources["method"])}" says a full fine-tune. Pick one.',
            launch.adapters, example=FIELDS["method"].example,
        )
    said = launch.adapters or launch.lora_default
    if said is not None and method is None and s.four_bit is None:
        s.set("method", Method.LORA, said)


def _launch_total(s: State, count: int, per_node: bool, words: str) -> tuple[int, str, str]:
    """A launcher's cards over all nodes (a per-node count times the nodes said), its
    words, and how the total was counted (for a message)."""
    nodes = s.fields.get("nodes")
    if per_node and isinstance(nodes, int) and nodes > 1:
        return count * nodes, words, f'{count} per node on "{s.sources["nodes"]}" is '
    return count, words, ""


def short(words: str) -> str:
    """An option as a message names it: no dashes, no section (``--parallelism.
    data_parallel_shard_degree 8`` → ``data_parallel_shard_degree 8``)."""
    key, _, rest = words.partition(" ")
    key = key.lstrip("-").rsplit(".", 1)[-1]
    return f"{key} {rest}".strip()


def _shard_total(s: State, degree: int, words: str) -> list[tuple[int, str, str]]:
    """The shard degree's sharding (FSDP over the degree's ranks, none over one) and the
    cards it implies: shard x replicate x tensor x context parallel (none for -1)."""
    words = short(words)
    said = s.fields.get("sharding")
    if isinstance(said, Sharding) and said.shards_weights != (degree != 1):
        does = "keeps whole weights on each rank" if degree == 1 else "shards the weights (FSDP)"
        raise error(f'"{quoted(words)}" {does}, but "{quoted(s.sources["sharding"])}" says '
                    f"{said}. Pick one.", words, example=SHARD_EXAMPLE)
    if said is None:
        s.set("sharding", Sharding.NONE if degree == 1 else Sharding.FSDP, words)
    factors = [str(degree)]
    total = degree
    if s.replicate is not None:
        total *= s.replicate[0]
        factors.append(short(s.replicate[1]))
        if degree == 1:  # replicas of whole weights: DDP, not HSDP
            s.replicate = None
    for field in ("tensor_parallel", "context_parallel"):
        value = s.fields.get(field)
        if isinstance(value, int) and value > 1:
            total *= value
            factors.append(short(s.sources[field]))
    how = f"{' x '.join(factors)} is " if len(factors) > 1 else ""
    return [] if degree == -1 else [(total, words, how)]


def _check_total(s: State, total: int, words: str, how: str) -> None:
    """Set the cards from a launcher's total, or refuse one that disagrees with the
    cards already named (a count said per node is multiplied by the nodes first)."""
    count, nodes = s.fields.get("gpu_count"), s.fields.get("nodes")
    if not isinstance(count, int):
        s.set("gpu_count", total, words)
        s.per_node = False  # the launcher's total already counts every node
        return
    named = count * nodes if s.per_node and isinstance(nodes, int) else count
    if named != total:
        other = s.sources["gpu_count"]
        raise error(
            f'"{quoted(words)}" conflicts with "{quoted(other)}": {how}{total} '
            f"card{'s' * (total != 1)} against {named}. Pick one.",
            words, example=COUNT_EXAMPLE,
        )


WORDS: Final = frozenset().union(
    _LAUNCHERS, _IGNORED, _IGNORED_WITH_VALUE, _MODEL_KEYS, _PER_NODE_COUNTS, _TOTAL_COUNTS,
    _SHARD_KEYS, _STRATEGY_KEYS, _LIGHTNING_PRECISION,
    {"cuda-visible-devices", "use-deepspeed", "zero-stage", "offload-optimizer-device",
     "offload-param-device", "multi-gpu", "mixed-precision", "precision", "launch"},
)
"""The fixed words these handlers read, spelled as the tokenizer reads them."""
