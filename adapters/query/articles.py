"""``a`` / ``an`` before a card or a node: how many of it the words name.

An ML engineer asking "can I fine-tune it on a 4090?" means one card, as ``1x 4090``
says: an article right before a card's name (``on a 4090``, ``on an a100 40gb``, ``an
nvidia h100``) is a count of one. Before a node it is one node (``a node of h100``, ``a
h100 node``: 1 node, its machine's cards, as ``1 node of h100`` reads); after cards it
says the cards are per node (``2 nodes with 8 h100s a node``). Anywhere else (``a 70b
model``, ``a batch of 8``, ``an 8x h100 node``, ``a pair of 4090s``) it is read as the
filler it always was.

The one card is settled once every word is read (:func:`check_article`): it is the
weakest way to say a count, so a count said elsewhere wins (``8 gpus on an h100``,
``--nproc_per_node 8 ... on a h100``: 8 cards, the article naming only which card), as
do nodes; a question that finds the count itself (``fewest cards``, or a follow-up on
its answer: :func:`keep_fewest_cards`) takes the card alone from it.
"""

from __future__ import annotations

from typing import Final

from adapters.query.names import resolve_gpu
from adapters.query.numbers import COUNT_RE, X_COUNT_RE, read_number
from adapters.query.state import State
from adapters.query.tokenizer import Word
from adapters.query.unknown_cards import CARD_MAKERS
from adapters.query.vocabulary import CARD_WORDS
from engine.choices import Solve

ARTICLES: Final = frozenset({"a", "an"})
_ONE_NODE: Final = frozenset({"node", "machine", "host", "server", "box"})
"""A node word that an article before it (or before its card) makes one node."""
_LONGEST_CARD: Final = 6
"""Words a card's name may take (``rtx pro 6000 blackwell workstation edition``)."""


def _card_end(s: State, j: int) -> int | None:
    """The index after the card named at ``j`` (maker's words before it skipped, as
    ``geforce 4090`` reads), or None when no card is named there."""
    while s.low(j) in CARD_MAKERS:
        if _card_words(s, j):
            break
        j += 1
    n = _card_words(s, j)
    return j + n if n else None


def _card_words(s: State, j: int) -> int:
    """How many words at ``j`` name a card (the longest run that does), or 0."""
    for n in range(_LONGEST_CARD, 0, -1):
        words = " ".join(w.low for w in s.words[j : j + n])
        if j + n <= len(s.words) and resolve_gpu(s.catalog, words):
            return n
    return 0


def _counted_after(s: State, e: int) -> bool:
    """Whether a count follows a card that ends at ``e`` (``h100 x8``, ``h100 x 8``,
    ``rtx 4090 24gb x2``): that count says how many, not the article."""
    if read_number(s.low(e)) is not None and s.low(e + 1) == "gb":
        e += 2  # the card's own memory, then its count
    return bool(X_COUNT_RE.match(s.low(e))) or (
        s.low(e) in ("x", "*") and bool(COUNT_RE.match(s.low(e + 1))))


def _one(s: State, i: int) -> None:
    """Read the article at ``i`` as the count ``1`` it says (the count's handlers read it
    next: ``a node of h100`` as ``1 node of h100``); its typed word is kept for messages."""
    word = s.words[i]
    s.words[i] = Word(word.raw, "1", word.origin)


def article(s: State, i: int) -> int:
    """``a 4090``: one card (settled by :func:`check_article`; the card is read next);
    ``a node``, ``a h100 node``: one node; ``8 h100s a node``: per node. 0 for any other
    ``a``, which the filler reads."""
    if s.low(i) not in ARTICLES:
        return 0
    before = s.low(i - 1) if i > 0 else ""
    after_cards = before in CARD_WORDS or (bool(before) and resolve_gpu(s.catalog, before))
    if s.low(i + 1) in _ONE_NODE:
        if after_cards:  # "8 h100s a node": the cards each node holds
            s.per_node = True
            return 2
        _one(s, i)
        return 0
    end = _card_end(s, i + 1)
    if end is None or _counted_after(s, end):
        return 0
    if s.low(end) in _ONE_NODE:
        _one(s, i)  # "a h100 node": one of the card's machines, as "1 h100 node" reads
        return 0
    if s.article is None:
        s.article = s.raw(i, end - i)
    return 1


def check_article(s: State) -> None:
    """Set the one card an article said (``on a 4090``), once every word is read, unless
    a count or nodes are said elsewhere (they say how many; the article only which card)
    or a ``fewest cards`` question finds the count (it takes only the card)."""
    if (s.article is None or s.fields.get("solve") is Solve.GPU_COUNT
            or "gpu_count" in s.fields or "nodes" in s.fields):
        return
    s.set("gpu_count", 1, s.article, s.article)


def keep_fewest_cards(changes: dict[str, object], s: State, asked: Solve | None) -> None:
    """In a follow-up on a ``fewest cards`` answer (``asked``), a card said with an
    article (``what about on an a100``) is a new card for the same question, as the card
    alone is: its one-card count is taken back out of ``changes``."""
    if s.article is None or asked is not Solve.GPU_COUNT or "solve" in changes:
        return
    if s.sources.get("gpu_count") == s.article:
        changes.pop("gpu_count", None)
        s.sources.pop("gpu_count")
