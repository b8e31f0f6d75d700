"""Plain English around a question as people type it in Slack and Discord ("quick q: is
it feasible to ...", "any idea how long ...", "I'm planning to ...", "will it OOM?"):
words that never change the estimate, read as nothing (:data:`adapters.query.
vocabulary.FILLER` includes them).

Left out on purpose: words that can carry a setting (``total`` before a batch is the
global batch; ``ram`` beside a size would name a card's memory), and words that ask for
a limit (``largest``, ``fewest``)."""

from __future__ import annotations

from typing import Final

CONVERSATION_WORDS: Final = frozenset(
    {
        # asking
        "quick", "q", "any", "idea", "ideas", "question", "help", "wondering", "curious",
        "anyone", "someone", "folks", "team", "here", "know", "let", "figure", "guess",
        "think", "reckon", "assume", "assuming", "please", "pls", "plz", "thanks", "thank",
        "thx", "cheers", "hello", "yo", "okay", "sure", "also", "just", "really",
        "actually", "maybe", "probably", "i'd", "i'm", "we're", "it's", "i'll", "we'll",
        "gonna", "wanna", "going", "thinking", "difference", "paper", "recipe", "benchmark",
        "benchmarks", "benchmarking",
        # judging
        "feasible", "possibly", "realistic", "realistically", "rough", "doable", "good",
        "fitting", "cheap", "expensive", "fast", "speed",
        # planning and renting
        "planning", "plan", "planned", "trying", "handle", "finish", "finished", "done",
        "option", "options", "internal", "repo", "rent", "renting", "rented", "needs",
        # what the reply already answers
        "time", "throughput", "footprint", "oom",
        # a config pasted as code: the keyword arguments inside are the settings
        "sftconfig", "trainingarguments", "seq2seqtrainingarguments",
        "loraconfig", "bitsandbytesconfig", "peft-config", "lora-config", "training-args",
        "bnb-config", "from-pretrained", "get-peft-model", "fastlanguagemodel",
        "fastlanguagemodel.from-pretrained", "fastlanguagemodel.get-peft-model",
        "automodelforcausallm.from-pretrained",
    }
)
"""Conversational words, each read as nothing."""
