"""Phrases beyond "number unit": the limit a question solves for, budgets and deadlines,
node layouts, DeepSpeed and 4-bit words, and settings that do not change the estimate
(datasets counted in samples: :mod:`adapters.query.samples`).

Each handler takes the scan state and the word index and returns the words it consumed
(0: not its phrase), like the handlers in :mod:`adapters.query.scanner`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.fields import FIELDS
from adapters.query.names import catalog_index, resolve_gpu
from adapters.query.numbers import (
    ALL_UNITS,
    COUNT_RE,
    COUNT_X_RE,
    SIZE_RE,
    Num,
    read_number,
    whole,
)
from adapters.query.state import State
from adapters.query.steps import card_beneath
from adapters.query.vocabulary import FOUR_BIT_WORDS
from engine.choices import Framework, Method, Precision, Sharding, Solve
from engine.constants import GPUS_PER_NODE
from engine.framework_facts import PROFILE_DEEPSPEED_ZERO
from engine.specs import Catalog

# --- solve for a limit -------------------------------------------------------------

_SOLVE_PHRASES: Final = {
    **dict.fromkeys(
        ("max seq", "max-seq", "max seq-len", "max sequence", "max context", "max ctx",
         "longest context", "longest seq", "longest sequence", "longest ctx", "max-context",
         "maximum seq", "maximum sequence", "maximum context"),
        Solve.SEQ_LEN,
    ),
    **dict.fromkeys(
        ("max batch", "max-batch", "max bs", "max micro-batch", "max batch-size",
         "largest batch", "biggest batch", "maximum batch"),
        Solve.MICRO_BATCH,
    ),
    **dict.fromkeys(
        ("largest model", "biggest model", "largest-model", "biggest-model", "max model",
         "largest models", "biggest models"),
        Solve.MODEL,
    ),
    **dict.fromkeys(
        ("fewest cards", "fewest gpus", "fewest-cards", "fewest-gpus", "min gpus", "min cards",
         "minimum gpus", "minimum cards", "fewest gpu", "least gpus", "least cards"),
        Solve.GPU_COUNT,
    ),
}
"""Words that ask for the limit that fits instead of a cost."""


def solve(s: State, i: int) -> int:
    """``max seq``, ``longest context``, ``max batch``, ``largest model``, ``fewest cards``.

    A number right after a sequence or batch phrase is a value (``max seq 8k`` is the
    sequence length), not a question, and is left to the unit handlers."""
    for n in (2, 1):
        phrase = " ".join(s.low(i + k) for k in range(n))
        goal = _SOLVE_PHRASES.get(phrase)
        if goal is None:
            continue
        value_next = read_number(s.low(i + n)) and not SIZE_RE.match(s.low(i + n))
        if goal in (Solve.SEQ_LEN, Solve.MICRO_BATCH) and value_next:
            return 0 if n == 1 else 1  # the "max" is filler; "seq 8k" is read next
        s.set("solve", goal, s.raw(i, n))
        return n
    return _solve_before_a_name(s, i)


def _solve_before_a_name(s: State, i: int) -> int:
    """``largest llama``: the largest model of the family named next; ``fewest a100
    cards``: the fewest of the card named next (the name is read next, as after
    ``largest model`` and ``fewest cards``)."""
    low, nxt = s.low(i), s.low(i + 1)
    if low in ("largest", "biggest") and nxt in catalog_index(s.catalog).families:
        s.set("solve", Solve.MODEL, s.raw(i))
        return 1
    if low in ("fewest", "least") and resolve_gpu(s.catalog, nxt) is not None:
        s.set("solve", Solve.GPU_COUNT, s.raw(i))
        return 1
    return 0


# --- budget and deadline -----------------------------------------------------------

_LIMIT_WORDS: Final = frozenset(
    {"under", "below", "within", "in", "by", "before", "deadline", "budget", "max-budget",
     "less-than", "at-most", "cap", "<", "<=", "max", "maximum"}
)
_POSTFIX_LIMITS: Final = frozenset(
    {"budget", "deadline", "max", "maximum", "cap", "or-less", "or-under", "total",
     "at-most", "tops"}
)
_OR_LESS: Final = frozenset({"or-less", "or-under", "at-most", "max", "maximum", "tops"})
"""After a limit said with its word first (``in 3 days or less``, ``under $500 at most``)
they say nothing more; those of :data:`_AT_MOST` before a number (``within 3 days max
$500``) start the next."""
_AT_MOST: Final = frozenset({"max", "maximum", "at-most"})
"""Before an amount of something other than money or time (``max 50M tokens``, ``up to
3 epochs``) they say that amount."""
_BUDGET_WORDS: Final = frozenset({"budget", "max-budget", "cap", "max", "maximum"})
"""Before ``of`` and an amount they say a budget (``budget of $500``)."""
_DURATION_UNITS: Final = {
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 1 / 60),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), 1.0),
    **dict.fromkeys(("d", "day", "days"), 24.0),
    **dict.fromkeys(("w", "wk", "wks", "week", "weeks"), 24.0 * 7),
}
_GLUED_DURATION: Final = re.compile(r"^([0-9]+(?:\.[0-9]+)?|\.[0-9]+)([a-z]+)$")


def _duration(s: State, i: int) -> tuple[float, int] | None:
    """Hours for ``48h``, ``2 days``, ``12 hours`` at word ``i``, and the words used."""
    glued = _GLUED_DURATION.match(s.low(i))
    if glued and glued.group(2) in _DURATION_UNITS:
        if glued.group(2) == "m" and s.low(i + 1) in ALL_UNITS:
            return None  # "max 50M tokens": 50 million of a unit, not 50 minutes
        return float(glued.group(1)) * _DURATION_UNITS[glued.group(2)], 1
    num = read_number(s.low(i))
    if num is not None and not num.is_price and s.low(i + 1) in _DURATION_UNITS:
        if s.low(i + 1) == "m" or num.percent:
            return None  # "50 m" is not a duration
        return num.scaled() * _DURATION_UNITS[s.low(i + 1)], 2
    return None


def _money(num: Num | None) -> bool:
    return num is not None and num.dollar and not num.hourly and not num.percent


def limit(s: State, i: int) -> int:
    """``under $500``, ``budget $2k``, ``$500 budget``, ``within 2 days``, ``in 12 hours``,
    ``by 48h``, ``48h deadline``."""
    low = s.low(i)
    if low in _BUDGET_WORDS and s.low(i + 1) == "of" and _money(read_number(s.low(i + 2))):
        return _set_budget(s, i + 2, i, 3)  # "budget of $500", "a cap of $2k"
    if low in _LIMIT_WORDS:
        num = read_number(s.low(i + 1))
        if _money(num) and low not in ("in", "by", "within"):
            return _set_budget(s, i + 1, i, 2 + _or_less(s, i + 2))
        found = _duration(s, i + 1)
        if found is not None and low not in ("budget", "max-budget", "cap"):
            return _set_deadline(s, found, i, 1 + found[1] + _or_less(s, i + 1 + found[1]))
        if low in _AT_MOST and num is not None and s.low(i + 2) in ALL_UNITS:
            return 1  # "max 50M tokens", "up to 3 epochs": the amount itself, read next
        if low in ("under", "below", "within", "less-than", "at-most") and num is not None:
            # Echo the number in the examples only where it would be a valid limit.
            said = s.low(i + 1)
            plain = not (num.dollar or num.percent or num.hourly) and 1 <= num.value <= 1e6
            budget, deadline = (said, said) if plain else ("500", "48")
            raise error(
                f'"{quoted(s.raw(i, 2))}": say what the limit is in: a budget in dollars '
                f"(under ${budget}) or a deadline in hours or days ({s.raw(i)} {deadline} "
                "hours).",
                s.raw(i, 2), example="8b lora 50M tokens under $500 within 2 days",
            )
        return 0
    if _money(read_number(low)) and _postfix_limit(s, i + 1):
        return _set_budget(s, i, i, 2)
    found = _duration(s, i)
    if found is not None and _postfix_limit(s, i + found[1]):
        return _set_deadline(s, found, i, found[1] + 1)
    return 0


def _postfix_limit(s: State, i: int) -> bool:
    """Whether word ``i``, after an amount, makes it a limit (``$500 or less``, ``3 days
    at most``); a word that starts another amount (``at most 3 epochs``) does not."""
    return s.low(i) in _POSTFIX_LIMITS and not _starts_amount(s, i)


def _or_less(s: State, i: int) -> int:
    """1 when word ``i`` repeats that the limit before it is an upper one (``in 3 days or
    less``, ``under $500 or less``), else 0."""
    return int(s.low(i) in _OR_LESS and not _starts_amount(s, i))


def _starts_amount(s: State, i: int) -> bool:
    """Whether word ``i`` (``max``, ``at most``) comes before another limit it states: a
    budget or a deadline (``3 days max $500``: the budget). Before any other amount
    (``$500 max 3 epochs``) it ends the limit said before it."""
    if s.low(i) not in (*_AT_MOST, "tops"):
        return False
    return _money(read_number(s.low(i + 1))) or _duration(s, i + 1) is not None


def _set_budget(s: State, num_at: int, phrase_at: int, n: int) -> int:
    num = read_number(s.low(num_at))
    assert num is not None
    s.set("budget_usd", num.scaled(), s.raw(phrase_at, n), s.raw(num_at))
    return n


def _set_deadline(s: State, found: tuple[float, int], phrase_at: int, n: int) -> int:
    hours = round(found[0], 6)
    s.set("deadline_hours", hours, s.raw(phrase_at, n))
    return n


# --- nodes -------------------------------------------------------------------------

NODE_WORDS: Final = frozenset({"nodes", "node", "machines", "machine", "hosts", "host",
                                "servers", "server", "boxes", "box"})
_GRID_RE: Final = re.compile(r"^([0-9]+)[x*]([0-9]+)$")


def nodes(s: State, i: int) -> int:
    """``2 nodes of 8x h100`` (8 per node), ``16 h100s across 2 nodes`` (16 in all),
    ``8 gpus per node``."""
    if s.low(i) == "per" and s.low(i + 1) in NODE_WORDS:
        s.per_node = True
        return 2
    if s.low(i) in ("per-node", "a-node"):
        s.per_node = True
        return 1
    num = s.count_before(i, NODE_WORDS)
    if num is None:
        return 0
    word = s.raw(i)
    if num.is_price or num.percent:
        raise error(f'"{quoted(word)}" must be a plain count of nodes.', word,
                    example=FIELDS["nodes"].example)
    s.set("nodes", whole(num.scaled(), word, "nodes"), s.raw(i, 2), word)
    if "gpu_count" in s.fields and s.low(i - 1) not in _SPREAD_WORDS:
        s.per_node_if_full = True  # "8x h100, 2 nodes": two 8-card machines (check_nodes)
    nxt = 2 + (s.low(i + 2) in ("of", "with", "each", "x", "*"))
    if COUNT_X_RE.match(s.low(i + nxt)) or COUNT_RE.match(s.low(i + nxt)):
        if nxt > 2:
            s.per_node = True
        else:  # "2 nodes 8x h100": per node if a node holds 8 (check_nodes)
            s.per_node_if_it_fits = True
        return nxt
    return 2


_SPREAD_WORDS: Final = frozenset({"across", "over", "on", "in", "between", "spanning"})
"""Before a node count, words that make a card count said earlier the total (``16 h100s
across 2 nodes``)."""


def node_grid(s: State, i: int) -> int:
    """``2x8 h100``: 2 nodes of 8 cards (the card follows and is read next)."""
    grid = _GRID_RE.match(s.low(i))
    if grid is None:
        return 0
    word = s.raw(i)
    if grid.group(1).startswith("0"):  # "0x10": hexadecimal, or a grid of no nodes
        raise error(f'"{quoted(word)}" is neither a grid of cards ("2x8": 2 nodes of 8) nor a '
                    "number I read (hexadecimal is not): write it in decimal, e.g. 16.", word,
                    example=FIELDS["nodes"].example)  # fmt: skip
    node_count, per_node = int(grid.group(1)), int(grid.group(2))
    s.set("nodes", node_count, word)
    s.set("gpu_count", node_count * per_node, word)
    return 1


def check_nodes(s: State) -> None:
    """Turn a per-node count into the total and check the two agree."""
    count, node_count = s.fields.get("gpu_count"), s.fields.get("nodes")
    card = s.catalog.gpus.get(str(s.fields.get("gpu") or card_beneath()))
    per_node = card.gpus_per_node if card is not None else GPUS_PER_NODE
    if s.per_node_if_it_fits and isinstance(count, int) and count <= per_node:
        s.per_node = True  # "2 nodes 8x h100": two machines of 8, as clusters are named
    if s.per_node_if_full and count == per_node:
        s.per_node = True  # "8x h100 2 nodes": a whole machine's cards, on each node
    if s.per_node:
        if not isinstance(node_count, int):
            raise error('"per node" needs a node count, e.g. "2 nodes of 8x h100".',
                        "per node", example=FIELDS["nodes"].example)
        if isinstance(count, int) and "gpu_count" in s.sources:
            s.fields.pop("gpu_count")
            s.set("gpu_count", count * node_count, s.sources.pop("gpu_count"))
            count = s.fields["gpu_count"]
    if isinstance(node_count, int) and count is None:
        # "2 nodes" alone: whole nodes, as clusters are rented, of the named card's size
        # (8 cards; an NVL72 rack of GB200s, 72; GH200, 1), else of GPUS_PER_NODE.
        count = node_count * per_node
        s.set("gpu_count", count, s.sources["nodes"])
    if isinstance(count, int) and isinstance(node_count, int) and count % node_count:
        raise error(
            f"{'1 card does' if count == 1 else f'{count} cards do'} not split evenly over "
            f"{node_count} nodes: name the cards per "
            f'node ("{node_count} nodes of 8x h100") or a total that divides.',
            s.sources.get("nodes"), example=FIELDS["nodes"].example,
        )


# --- words that do not change the estimate -------------------------------------------

_NO_EFFECT: Final = frozenset(
    {"alpha", "α", "lora-alpha", "lr", "learning-rate", "warmup", "warmup-steps", "warmup-ratio",
     "seed", "weight-decay", "wd", "max-grad-norm", "neftune-noise-alpha",
     "loraplus-lr-ratio",  # LoRA+'s learning-rate ratio
     # how often a run logs, saves and evaluates (HF's *_steps arguments)
     "logging-steps", "save-steps", "eval-steps"}
)
"""Settings people state that change neither memory nor time (LoRA alpha only scales)."""


def says_only_what_costs_nothing(s: State) -> str | None:
    """The first word of ``s`` that changes neither memory nor time (``alpha``, ``lr``),
    for a follow-up that changed nothing else; None when there is none."""
    return next((w.low for w in s.words if w.low in _NO_EFFECT), None)


def no_effect(s: State, i: int) -> int:
    """``alpha 32``, ``lr 2e-4``: read and set nothing (they do not change the cost).
    A version after a library's name (``cuda 12.1``, ``transformers 4.46.0``) is read
    and ignored too; the name itself is read as it always is."""
    if s.low(i) in _NO_EFFECT and read_number(s.low(i + 1)) is not None:
        return 2
    if s.low(i - 1) in _VERSIONED and _VERSION.match(s.low(i)):
        return 1
    return 0


_VERSIONED: Final = frozenset(
    {"cuda", "rocm", "torch", "pytorch", "python", "transformers", "peft", "trl",
     "deepspeed", "accelerate", "bitsandbytes", "flash-attn", "unsloth", "torchtune",
     "litgpt", "torchtitan", "axolotl", "nccl", "driver", "llama-factory"}
)
_VERSION: Final = re.compile(r"^v?[0-9]+(?:\.[0-9]+){1,3}(?:[a-z0-9.+-]*)$")
"""``12.1``, ``4.46.0``, ``v0.4.1``, ``2.5.1+cu121``: a release, not a setting."""


# --- DeepSpeed ---------------------------------------------------------------------------

_DEEPSPEED_WORDS: Final = frozenset({"deepspeed", "ds"})
_STAGES: Final = {"1": Sharding.ZERO1, "2": Sharding.ZERO2, "3": Sharding.ZERO3}
_GLUED_STAGE: Final = re.compile(r"^(?:deepspeed|ds)[-_]?(?:zero)?[-_]?(?:stage)?[-_]?([123])$")


def deepspeed(s: State, i: int) -> int:
    """``deepspeed``: the ZeRO stages' implementation, read with the stage it runs.

    Also reads the stage said the way DeepSpeed's config says it: ``deepspeed stage 3``,
    ``zero stage 2``, ``deepspeed zero stage 3``, and glued forms (``ds-zero3``,
    ``deepspeed-zero2``, ``ds3``), which name DeepSpeed and its stage at once."""
    word = s.low(i)
    if glued := _GLUED_STAGE.match(word):
        s.deepspeed = s.raw(i)
        s.set("sharding", _STAGES[glued.group(1)], s.raw(i))
        return 1
    named = word in _DEEPSPEED_WORDS
    n = 1 if named else 0
    # "zero stage 3": the number-words reader has already made "zero" a 0
    zero = _is_zero(s, i + n) and s.low(i + n + 1) == "stage"
    n += zero
    staged = s.low(i + n) == "stage" and s.low(i + n + 1) in _STAGES
    if staged and (named or zero):
        s.deepspeed = s.raw(i)
        s.set("sharding", _STAGES[s.low(i + n + 1)], s.raw(i, n + 2))
        return n + 2
    if not named:
        return 0
    s.deepspeed = s.raw(i)
    return 1


def _is_zero(s: State, i: int) -> bool:
    """Word ``i`` was typed as the word "zero"."""
    return s.low(i) == "0" and s.raw(i).lower() == "zero"


def check_deepspeed(s: State) -> None:
    """DeepSpeed needs its stage named; it runs under the Hugging Face stack (the ``hf``
    profile holds DeepSpeed's facts), so it sets that framework unless another is named,
    and a framework that never runs DeepSpeed is refused."""
    if s.deepspeed is None:
        return
    sharding = s.fields.get("sharding")
    if not (isinstance(sharding, Sharding) and sharding.is_zero):
        raise error(
            f'"{quoted(s.deepspeed)}" needs its ZeRO stage: zero1, zero2 or zero3 '
            '(e.g. "70b full deepspeed zero3 8x h100").',
            s.deepspeed, example=FIELDS["sharding"].example,
        )
    framework = s.fields.get("framework")
    if framework is None:
        s.set("framework", Framework.HF, s.deepspeed)
    elif not (isinstance(framework, Framework) and PROFILE_DEEPSPEED_ZERO[framework.value]):
        raise error(
            f'"{quoted(s.sources["framework"])}" does not run DeepSpeed: its zero stages are '
            "FSDP's sharding. Drop one of the two words.",
            s.deepspeed, example=FIELDS["sharding"].example,
        )


# --- a 4-bit base ------------------------------------------------------------------------

def four_bit(s: State, i: int) -> int:
    """``nf4``, ``4-bit``, ``load_in_4bit``, ``hqq``: the base is 4-bit, so the method is
    QLoRA; read once all words are (``4-bit lora`` is QLoRA, not a conflict)."""
    if s.low(i) == "hqq":
        # HQQ's 4-bit base (group 64, a 16-bit scale and zero) stores 4.5 bits a weight,
        # as NF4 without double quantization does: read as that, dequantized as NF4 is.
        s.four_bit = s.raw(i)
        s.set("double_quant", False, s.raw(i))
        return 1
    if s.low(i) not in FOUR_BIT_WORDS:
        return 0
    s.four_bit = s.raw(i)
    return 1


def check_offload_weights(s: State) -> None:
    """``offload optimizer`` or ``offload params`` says what goes to host memory, so it
    also turns ``offload`` on; refused beside a ``no-offload``."""
    if "offload_weights" not in s.fields:
        return
    said = s.sources.get("offload_weights", "offload")
    if s.fields.get("offload") is False:
        raise error(f'"{quoted(said)}" offloads, but "{quoted(s.sources["offload"])}" does '
                    "not: say one.", said, example=FIELDS["offload_weights"].example)
    if "offload" not in s.fields:
        s.set("offload", True, said)


def check_dora(s: State) -> None:
    """DoRA trains adapters: refused beside ``full``."""
    if s.fields.get("dora") is True and s.fields.get("method") is Method.FULL:
        raise error(
            f'"{quoted(s.sources["dora"])}" decomposes LoRA adapters, which a full fine-tune '
            f'has none of: say lora or qlora, or drop "{quoted(s.sources["dora"])}".',
            s.sources["dora"], example=FIELDS["dora"].example,
        )


_EP_WORD = re.compile(r"(?:^|\s)eps?(?:\s|\d|$)|\d\s*eps?$")
"""``ep`` or ``eps`` as the epochs unit (``ep 8``, ``ep8``, ``8 ep``), not ``epochs``."""


def check_expert_parallel_word(
    fields: Mapping[str, object], said: str | None, catalog: Catalog | None
) -> None:
    """``ep 8`` (``said``, the words that set ``epochs``) beside a mixture-of-experts
    model: Megatron's and torchtitan's users mean expert parallelism by it, everyone else
    epochs. Read as epochs it would multiply the time silently, so the query must say
    which. ``fields``: the query's, or a follow-up's merged with its thread's."""
    if said is None or catalog is None or not _EP_WORD.search(said.lower()):
        return
    model = catalog.models.get(str(fields.get("model", "")))
    if model is None or not model.is_moe:
        return
    count = f"{fields['epochs']:g}"
    raise error(
        f'"{quoted(said)}" beside {model.name}, a mixture-of-experts model, could mean '
        f'{count} epochs or expert parallelism over {count} cards: say "{count} epochs" '
        "for epochs. Expert parallelism is not modeled; for the same cards say fsdp, which "
        "shards the experts with the rest of the model.",
        said, example=f"{model.id} qlora {count} epochs 50M tokens",
    )


FLASH_ATTENTION_2_WORDS: Final = ("fa2", "flash-attention-2", "flash-attn-2")
"""Words that name FlashAttention-2 itself (transformers' ``flash_attention_2``): they say
the run does not use the card's native kernels, whatever its framework would pick."""


def check_native_attention(s: State) -> None:
    """FlashAttention-3 and cuDNN attention are FlashAttention kernels: refused beside
    ``no-flash``. A word naming FlashAttention-2 also says ``native_attention`` off."""
    flash_said = s.sources.get("flash_attention", "")
    spelled = re.sub(r"[\s_]+", "-", flash_said.lower())
    if (
        s.fields.get("flash_attention") is True
        and "native_attention" not in s.fields
        and any(word in spelled for word in FLASH_ATTENTION_2_WORDS)
    ):
        s.fields["native_attention"] = False
        s.sources["native_attention"] = flash_said
    if s.fields.get("native_attention") is True and s.fields.get("flash_attention") is False:
        said = s.sources["native_attention"]
        raise error(
            f'"{quoted(said)}" is a FlashAttention kernel, but '
            f'"{quoted(s.sources["flash_attention"])}" turns FlashAttention off: say one.',
            said, example=FIELDS["native_attention"].example,
        )


def check_qlora_base(
    fields: Mapping[str, object], sources: Mapping[str, str], followup: bool = False
) -> None:
    """QLoRA's base is 4-bit (NF4), so an FP8 base (``fp8``) contradicts it: refused
    with what to say instead, as ``full`` beside ``qlora`` is. ``fields``: a query's, or
    a follow-up's merged with its thread's; ``sources``: the words said this time (in a
    follow-up one of the two may be the earlier estimate's, so it must say both)."""
    if fields.get("method") is not Method.QLORA or fields.get("precision") is not Precision.FP8:
        return
    fp8, qlora = sources.get("precision"), sources.get("method")
    said = f'"{quoted(fp8)}" says' if fp8 else "The earlier estimate has"
    method = f'"{quoted(qlora)}"' if qlora else "the earlier estimate's QLoRA"
    # in a follow-up the earlier FP8 base carries over unless a precision is said
    plain, matmuls = (('"qlora bf16"', '"lora bf16 float8"') if followup
                      else ('"qlora" alone', '"lora float8"'))
    raise error(
        f"{said} an FP8 base, but {method} keeps the base in 4 bits (NF4): say {plain} for "
        f'QLoRA, "lora fp8" or "full fp8" for an FP8 base, or {matmuls} for FP8 matmuls on '
        "a 16-bit base.", fp8 or qlora,
        example="what if qlora bf16" if followup else "qwen2.5-7b qlora 50M tokens a100",
    )


def check_four_bit(s: State) -> None:
    """A 4-bit base with ``lora`` (or no method) is QLoRA; with ``full`` it is refused."""
    if s.four_bit is None:
        return
    method = s.fields.get("method")
    if method is Method.FULL:
        raise error(
            f'"{quoted(s.four_bit)}" means a frozen 4-bit base, which only adapters train: '
            f'say "qlora" or drop "{quoted(s.sources["method"])}".',
            None if "/" in s.four_bit else s.four_bit,  # a 4-bit org/name: no Hub lookup
            example=FIELDS["method"].example,
        )
    if method is Method.LORA:
        s.fields["method"] = Method.QLORA
        s.sources["method"] = f'{s.sources["method"]} {s.four_bit}'
        return
    s.set("method", Method.QLORA, s.four_bit)
