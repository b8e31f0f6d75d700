"""The ftcost query language: one line of words in, a :class:`Request` out.

Every platform (terminal, Slack, Discord) shares this parser. A query is a bag
of *phrases* in any order, case-insensitive::

    70b qlora 50M tokens h100
    llama 3.1 8b lora 200M tokens 2 epochs seq 8k 4x a100 $1.80/hr

Grammar (``|`` separates alternatives, ``[]`` is optional)::

    query    := phrase*
    phrase   := filler | keyword | flag | number unit | unit number | price
              | [count ["x"]] card ["x" count] | count ("gpus" | "cards")
              | model | family size | size
    number   := ["-"] digits ["." digits] ["e" digits] [k | m | b | t] ["%"]
    size     := digits ["." digits] "b"                       (8b, 0.5b, 70b)
    price    := ["$"] number "/hr" | "$" number ("per hour" | "hourly") | "price" number
    budget   := ("under" | "budget" ["of"] | "less than" | ...) "$" number | "$" number "budget"
    count    := digits | digits "x"                           (8 h100, 8x h100)
    card     := a GPU id, name or alias, plural allowed (a100s), or glued to its
                count (8xa100-80, h100x8)
    model    := a model id, name or alias, possibly spread over up to three
                words (llama 3.1 8b, qwen2.5 7b); ``synthetic-20b``
    flag     := ckpt | flash | fused-ce | offload | double-quant, negated by a
                ``no-`` prefix or a preceding ``no`` / ``without`` / ``off``

A follow-up also reads a factor of the earlier value (``double the batch``, ``2x the
data``, ``half the gpus``), and every text drops the phrase after ``instead of``
(``h100 instead of a100``): see :mod:`adapters.query.relative`.

Units, with the Request field each one sets::

    tokens tok token         dataset_tokens   decimal: 500k = 500,000
    epochs epoch ep          epochs           1ep, epochs 2, 0.5 epochs
    seq ctx context seqlen   seq_len          binary: 8k = 8192
    bs batch micro-batch     micro_batch
    accum grad-accum ga      grad_accum       accum 8, 8 accum, ga=8
    global batch size gbs    grad_accum       global / (micro-batch x DP ranks)
    dropout lora-dropout     lora_dropout     dropout 0.05, dropout 5%
    r rank                   lora_rank        r64, rank 64, r=64
    mfu                      mfu              mfu 40%, mfu 0.4, 40% mfu
    price, $ / /hr           price_per_gpu_hour

A unit may come before or after its number (``seq 8k`` = ``8k seq``) and may be
glued to it (``r64``, ``1ep``); ``key=value`` is the same as ``key value``.

Ambiguities and how they resolve:

* ``8b`` alone is a model size; before a unit it is a number (``8B tokens``).
  In a run like ``70b tokens 50M`` where numbers and units alternate and the
  numbers outnumber the units, the leading size is the model.
* A bare size maps through ``Catalog.model_for_size``; one with no canonical
  model (``20b``) becomes ``synthetic-20b`` (0.1b to 2000b).
* ``mfu 40`` and ``dropout 5`` (no ``%``, above 1) are read as percentages, ``mfu 0.4``
  (below 1) as a fraction; a bare ``1`` could be either and is refused (``mfu 1%`` or
  ``mfu 100%``).
* A number before a unit it does not fit, when the unit has a number after it, leaves
  the unit to that number (``8k mfu 40%``: ``mfu 40%``, and ``8k`` needs its unit).
* A card's memory before its name picks that variant as after it does (``40gb a100`` is
  ``a100 40gb``).
* A family and a version without a size (``qwen 3``, ``qwen3``) is refused with the
  sizes of that generation in the catalog (:mod:`adapters.query.versions`).
* ``a`` / ``an`` right before a card is one card (``on a 4090``), before a node one node
  (``a h100 node``); elsewhere it is filler (:mod:`adapters.query.articles`).
* A model the catalog lacks (``llama 4 scout``, ``llama-4-scout``) is refused as not in
  the catalog, with how to name a Hub model (:mod:`adapters.query.unlisted`).
* A bare ``$500`` (no ``/hr``, no ``under`` / ``budget``) is refused with a question:
  a budget or a rate per GPU-hour? Either guess would price every card wrong.
* Numbers for tokens round to a whole count; sequence length, batch, rank and
  GPU count must be whole.

Errors are :class:`QueryError`: the message names the offending word, suggests
the nearest known words and shows an example. No other exception escapes
:func:`parse_query`, :func:`apply_followup` or :func:`parse_fields` for any
input string.
"""

from __future__ import annotations

from adapters.query.errors import EXAMPLE, MAX_QUERY_CHARS, QueryError
from adapters.query.parser import (
    NOTHING_SAID,
    Said,
    apply_followup,
    parse_fields,
    parse_query,
    seed_largest_model,
)

__all__ = ["EXAMPLE", "MAX_QUERY_CHARS", "NOTHING_SAID", "QueryError", "Said",
           "apply_followup", "parse_fields", "parse_query", "seed_largest_model"]
