"""Datasets as people count them (issue 16: ``10k samples of 512 tokens``): what the
sample count means for the tokens trained and, without packing, for padding.

The parser sets ``dataset_tokens`` = samples x average tokens; this module words the
assumptions behind that number. Without packing each sample is its own sequence, padded
to the longest sample in its micro-batch (Hugging Face's ``DataCollatorWithPadding`` /
``padding="longest"``, the default of TRL's SFT collator without packing) and cut at the
maximum length; padded positions cost compute (attention and MLPs run on them) though
they add no loss. The time model runs each micro-batch at the average sample length
(``engine.workload.timed_seq_len``) and the memory at the limit (the longest batch sets
the peak), so this says how far padding can push compute above the estimate.
"""

from __future__ import annotations

from engine.constants import DEFAULT_SEQ_LEN, MAX_SEQ_LEN
from engine.request import Request
from engine.wording import tokens_text

SEQUENCE_FIELDS = frozenset({"seq_len", "max_len"})
"""What names a run's sequence limit; a dataset of long samples sets it where neither is
said (:func:`sequence_for_samples`)."""


def sequence_for_samples(request: Request) -> int | None:
    """The sequence limit of a dataset given as unpacked samples of an average length
    longer than the default (``10k samples of 3000 tokens``) when the user named none: the
    smallest power of two that holds the average sample (4,096), as a trainer's
    ``max_seq_length`` would be set, rather than cutting every sample at 2,048. None
    where the user named a limit, the samples are packed or fit the default."""
    length = request.sample_tokens
    if (length is None or request.samples is None or request.packing
            or length <= DEFAULT_SEQ_LEN or not SEQUENCE_FIELDS.isdisjoint(
                request.model_fields_set)):
        return None
    return min(1 << (length - 1).bit_length(), MAX_SEQ_LEN)


def dataset_assumptions(request: Request) -> list[str]:
    """Assumption lines for a dataset given as samples x average length (empty otherwise)."""
    count, length = request.samples, request.sample_tokens
    if count is None or length is None:
        return []
    cap = request.sample_limit
    head = (
        f"Dataset: {count:,} samples x {length:,} tokens on average = "
        f"{tokens_text(count * length)} tokens"
    )
    if request.packing:
        return [
            f"{head}, packed into sequences of {request.seq_len:,}: compute counts those "
            "tokens and no padding."
        ]
    lines = [f"{head}, not packed: each sample is its own sequence, cut at {cap:,} tokens."]
    if sequence_for_samples(request) is not None:  # the sequence these samples set
        lines[0] = (f"{head}, not packed: each sample is its own sequence, cut at {cap:,} "
                    f"tokens, the smallest power of two above the average (`seq "
                    f"{DEFAULT_SEQ_LEN}` cuts them there).")
    if length > cap:
        lines.append(
            f"The average sample ({length:,} tokens) is longer than the {cap:,}-token limit: "
            f"samples are truncated, so each epoch trains about {tokens_text(count * cap)} of "
            f"the {tokens_text(count * length)} tokens (`packing` keeps them all)."
        )
    elif request.micro_batch > 1:
        worst = cap / length
        lines.append(
            f"Each sample is padded to the longest in its micro-batch of "
            f"{request.micro_batch} (at most {cap:,} tokens): padded positions cost compute "
            f"without adding loss. The time runs each micro-batch at the average length "
            f"({length:,} tokens) and counts the real tokens; with widely varying lengths "
            f"padding can add up to {worst:,.1f}x that compute. `packing` (or "
            "length-grouped batches) avoids it."
        )
    else:
        lines.append("Micro-batch 1: no padding, each sample costs its own length.")
    return lines
