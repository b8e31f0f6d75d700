"""How the engine's lines say numbers: token counts, epochs, and memory shares that never
round across a fit band's line."""

from __future__ import annotations

import pytest

from engine.wording import epochs_text, share_text, tokens_text


@pytest.mark.parametrize(("n", "text"), [(50e6, "50M"), (1.5e9, "1.5B"), (999, "999"),
                                          (1e15, "1,000T")])
def test_token_counts_read_in_three_figures(n: float, text: str) -> None:
    assert tokens_text(n) == text


@pytest.mark.parametrize(("epochs", "text"), [(1, "1 epoch"), (3, "3 epochs"),
                                               (0.5, "0.5 epochs")])
def test_one_epoch_is_singular(epochs: float, text: str) -> None:
    assert epochs_text(epochs) == text


@pytest.mark.parametrize(("share", "text"), [(0.57, "57%"), (0.854, "85.4%"), (0.85, "85%"),
                                              (1.004, "100.4%"), (0.996, "99.6%"),
                                              (1.0, "100%")])
def test_a_share_never_rounds_across_a_band_line(share: float, text: str) -> None:
    assert share_text(share) == text
