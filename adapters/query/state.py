"""The scan's state: the words, the fields found so far and the words that set them."""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.query.errors import error, quoted
from adapters.query.fields import FIELDS, check_field
from adapters.query.numbers import SIZE_RE, Num, Unit, read_number
from adapters.query.tokenizer import Word
from engine.choices import Method, ModelPick
from engine.specs import Catalog


@dataclass
class Launch:
    """What launcher and recipe words said that is settled once every word is read
    (:func:`adapters.query.launchers.check_launch`)."""

    counts: list[tuple[int, bool, str]] = field(default_factory=list)
    """Cards a launcher starts: (count, whether per node, the words that said it)."""
    shard: tuple[int, str] | None = None
    """torchtitan's data-parallel shard degree (-1: every rank left) and its words."""
    adapters: str | None = None
    """A recipe that trains adapters (torchtune's ``lora_finetune_*``, litgpt's
    ``finetune_lora``): LoRA, or QLoRA when a 4-bit base is said."""
    lora_default: str | None = None
    """litgpt's plain ``finetune`` (its alias of ``finetune_lora``): LoRA unless another
    method is said."""
    ddp: str | None = None
    """accelerate's ``--multi_gpu``: plain data parallelism unless a sharding is said."""
    family: tuple[str, str] | None = None
    """torchtitan's ``--model.name`` (a family) and its words."""
    flavor: tuple[str, str] | None = None
    """torchtitan's ``--model.flavor`` (a size) and its words."""
    node_cards: str | None = None
    """``--nproc_per_node gpu``: every card of the node, a count a query must name."""
    optimizer_offload: str | None = None
    """DeepSpeed's optimizer offloaded (``--offload_optimizer_device cpu``)."""
    hf_launcher: str | None = None
    """``accelerate launch``: the Hugging Face stack's launcher (TRL, PEFT, axolotl and
    LLaMA-Factory scripts run under it), so ``hf`` unless a framework is said."""


@dataclass
class Pending:
    """What the phrasings of :mod:`adapters.query.phrasing` and
    :mod:`adapters.query.sharding_words` said that is settled once every word is read
    (their ``check_phrasing`` and ``check_sharding``)."""

    batch_word: str | None = None
    """The unit word that set the micro-batch (``bs``, ``batch-size``, ``micro-batch``):
    a plain batch beside a per-device one is the global batch."""
    per_device: tuple[int, str] | None = None
    """A batch said per device (``8 per device``, ``2 sequences per gpu``) and its words."""
    per_sample: tuple[Num, str, str] | None = None
    """``16k tokens per sequence`` / ``per sample``: the number, the words, the number's
    word; the sequence length when no sample count is said (:func:`adapters.query.
    phrasing.sample_length_as_sequence`)."""
    data_parallel: tuple[int | None, str] | None = None
    """``dp 8``, ``8-way data parallel``, ``data parallel`` (no degree: None)."""
    fsdp_degree: tuple[int, str] | None = None
    """``fsdp 8``, ``fsdp=8``: the ranks FSDP shards over, checked against the cards."""
    zero_offload: tuple[str, str] | None = None
    """``ZeRO-Offload`` / ``ZeRO-Infinity`` (``offload`` / ``infinity``) and its word."""


@dataclass(frozen=True)
class Relative:
    """A change by a factor of the earlier estimate's value (``double the batch``),
    settled by :func:`adapters.query.relative.apply_relative` in a follow-up."""

    factor: float
    phrase: str
    """The words that said it, quoted back in messages."""
    card: str | None = None
    """The card a count was named by (``double the h100s``), to check against the
    earlier estimate's."""
    plus: int = 0
    """Cards added after the factor (``one more gpu``, ``add a second 4090``: 1)."""


class State:
    """Words being scanned and the fields found so far, with the words that set them."""

    def __init__(self, words: list[Word], catalog: Catalog) -> None:
        self.words = words
        self.catalog = catalog
        self.fields: dict[str, object] = {}
        self.sources: dict[str, str] = {}
        self.per_node = False
        """A card count was said per node (``2 nodes of 8x h100``)."""
        self.per_node_if_it_fits = False
        """A card count was said right after the nodes (``2 nodes 8x h100``): per node when
        a node holds that many of the card, else the total (``2 nodes 16x h100``)."""
        self.per_node_if_full = False
        """A card count was said before the nodes (``8x h100 2 nodes``): per node when it
        is a whole machine of the card, else the total (``4x h100 2 nodes``)."""
        self.model_pick: ModelPick | None = None
        self.instance: tuple[str, int, bool] | None = None
        """A cloud instance type named, as typed, its cards per instance and whether a
        count of instances was said with it (settled by :func:`adapters.query.instances.
        check_instance`)."""
        """How the model was named when not exactly (a bare size, a family word)."""
        self.deepspeed: str | None = None
        """The word that said DeepSpeed, checked against the stage once all are read."""
        self.global_batch: tuple[float, str] | None = None
        """A global batch (sequences per optimizer step over all cards) and the words
        that said it: turned into ``grad_accum`` once the batch and count are read."""
        self.replicate: tuple[int, str] | None = None
        """A data-parallel replicate degree above 1 and the words that said it: HSDP,
        checked against the sharding and cards once all are read."""
        self.full_ac: str | None = None
        """The words that said full checkpointing with ``full`` (``full ac``, ``ac full``):
        in a query that names no method, the method too."""
        self.article: str | None = None
        """The words that named one card with an article (``a 4090``): its count once
        all are read (adapters/query/articles.py)."""
        self.four_bit: str | None = None
        """The word that said a 4-bit base (``nf4``, ``4-bit``): QLoRA once all are read."""
        self.launch = Launch()
        """Launcher and recipe words read once all are (adapters/query/launchers.py)."""
        self.pending = Pending()
        """Phrasings read once all words are (adapters/query/phrasing.py)."""
        self.relative: dict[str, Relative] = {}
        """Fields changed by a factor (``double the batch``): a follow-up's, by field."""
        self.them: str | None = None
        """The words that counted the earlier estimate's cards (``use 2 of them``): a
        follow-up's, refused when that estimate named no card."""
        self.asks: str | None = None
        """A word that asks what every estimate shows (``cheaper?``): filler beside a
        setting, refused alone (adapters/query/relative.py)."""

    def low(self, i: int) -> str:
        return self.words[i].low if 0 <= i < len(self.words) else ""

    def count_before(self, i: int, words: frozenset[str]) -> Num | None:
        """The number at ``i`` when the word after it is one of ``words`` (``10k samples``,
        ``500 steps``); None when there is none, or when it is a model size said before
        the model is (``8b steps 100``: 8b is the model, as a size before any unit but
        tokens is)."""
        if self.low(i + 1) not in words:
            return None
        if SIZE_RE.match(self.low(i)) and "model" not in self.fields:
            return None
        return read_number(self.low(i))

    def raw(self, i: int, n: int = 1) -> str:
        """The typed text of words ``i .. i+n`` (glued pieces shown once)."""
        parts: list[str] = []
        last = -1
        for word in self.words[i : i + n]:
            if word.origin != last:
                parts.append(word.raw)
                last = word.origin
        return " ".join(parts)

    def set(self, field: str, value: object, phrase: str, word: str | None = None) -> None:
        """Record a field; QueryError if out of range or already set differently."""
        check_field(field, value, phrase, word)
        if field == "method" and {self.fields.get(field), value} == {Method.LORA, Method.QLORA}:
            value = Method.QLORA  # "lora ... qlora": QLoRA is LoRA on a 4-bit base
            self.fields[field] = value
        if field in self.fields and self.fields[field] != value:
            label = FIELDS[field].label
            raise error(
                f'"{quoted(phrase)}" conflicts with "{quoted(self.sources[field])}": '
                f"both set the {label}. Pick one.",
                phrase,
                example=FIELDS[field].example,
            )
        self.fields[field] = value
        self.sources.setdefault(field, phrase)

    def set_number(self, unit: Unit, num_at: int, phrase_at: int) -> int:
        """Set ``unit``'s field from the number at ``num_at``; the phrase is 2 words."""
        word = self.raw(num_at)
        value = unit.convert(require(read_number(self.low(num_at))), word)
        self.set(unit.field, value, self.raw(phrase_at, 2), word)
        if unit.field == "micro_batch":  # "bs 16" beside "8 per device": the global batch
            self.pending.batch_word = self.low(phrase_at + (num_at == phrase_at))
        return 2


def require(num: Num | None) -> Num:
    """The number a handler has already matched (a QueryError, never a crash, if not)."""
    if num is None:
        raise error("I couldn't read a number in that query.")
    return num
