"""Datasets counted in samples (issue 16): the tokens multiply out and, without packing,
the assumptions say how padding to the batch's longest sample affects compute."""

from __future__ import annotations

import io
import json

import pytest

from adapters.cli import main
from adapters.parse import parse_query
from engine import Request, estimate
from engine.datasets import dataset_assumptions
from engine.specs import Catalog


def samples_request(**fields: object) -> Request:
    base: dict[str, object] = {"model": "llama-3.1-8b", "samples": 10_000, "sample_tokens": 512,
                               "dataset_tokens": 5_120_000}
    return Request.model_validate({**base, **fields})


def test_sample_counts_multiply_out_through_the_terminal() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["--json", "8b", "lora", "20k", "examples", "avg", "800", "tokens"], out, err) == 0
    doc = json.loads(out.getvalue())
    assert doc["request"]["dataset_tokens"] == 20_000 * 800
    assert doc["compute"]["trained_tokens"] == 20_000 * 800 * doc["request"]["epochs"]


def test_without_packing_the_assumptions_say_samples_are_padded_to_the_batchs_longest() -> None:
    lines = dataset_assumptions(samples_request(micro_batch=4, max_len=1024))
    assert "not packed" in lines[0] and "cut at 1,024 tokens" in lines[0]
    assert "padded to the longest in its micro-batch of 4 (at most 1,024 tokens)" in lines[1]
    assert "up to 2.0x that compute" in lines[1]


def test_packing_says_there_is_no_padding() -> None:
    [line] = dataset_assumptions(samples_request(packing=True))
    assert "packed into sequences of 2,048" in line and "no padding" in line


def test_samples_longer_than_the_limit_are_said_to_be_truncated() -> None:
    lines = dataset_assumptions(samples_request(sample_tokens=4096, dataset_tokens=40_960_000,
                                                max_len=2048))
    assert "truncated" in lines[1]


def test_micro_batch_one_has_no_padding() -> None:
    assert "no padding" in dataset_assumptions(samples_request())[1]


def test_a_token_count_adds_no_dataset_assumption(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=5_000_000), catalog)
    assert not any(a.startswith("Dataset:") for a in est.assumptions)
    with_samples = estimate(samples_request(micro_batch=2), catalog)
    assert any(a.startswith("Dataset: 10,000 samples") for a in with_samples.assumptions)


def test_unpacked_samples_longer_than_the_limit_train_only_up_to_the_limit() -> None:
    request = parse_query("8b lora 10k samples of 4096 tokens seq 2048 1 epoch h100")
    assert request.dataset_tokens == 10_000 * 4096
    assert request.trained_tokens == 10_000 * 2048


def test_packed_samples_train_every_token() -> None:
    request = parse_query("8b lora 10k samples of 4096 tokens seq 2048 1 epoch packing h100")
    assert request.trained_tokens == 10_000 * 4096


def test_truncated_samples_take_the_time_of_the_tokens_they_keep() -> None:
    cut = estimate(parse_query("8b lora 10k samples of 4096 tokens seq 2048 h100"))
    whole = estimate(parse_query("8b lora 10k samples of 2048 tokens seq 2048 h100"))
    assert cut.recommended is not None and whole.recommended is not None
    assert cut.recommended.timing.gpu_hours == pytest.approx(
        whole.recommended.timing.gpu_hours, rel=1e-6)


# -- a dataset of long samples sizes the sequence ---------------------------------------------
def test_samples_longer_than_the_default_run_at_the_next_power_of_two() -> None:
    est = estimate(parse_query("8b lora 10k samples of 3000 tokens h100"))

    assert est.effective.seq_len == 4096 and est.effective.kept_share == 1.0


def test_the_sequence_set_from_samples_is_not_taken_as_said() -> None:
    est = estimate(parse_query("8b lora 10k samples of 3000 tokens h100"))

    assert "seq_len" not in est.effective.model_fields_set


def test_a_sequence_said_still_cuts_long_samples() -> None:
    est = estimate(parse_query("8b lora 10k samples of 3000 tokens seq 2048 h100"))

    assert est.effective.seq_len == 2048 and est.effective.kept_share < 1


def test_packed_samples_keep_the_default_sequence() -> None:
    est = estimate(parse_query("8b lora 10k samples of 3000 tokens packing h100"))

    assert est.effective.seq_len == 2048


def test_samples_shorter_than_the_default_keep_it() -> None:
    est = estimate(parse_query("8b lora 10k samples of 300 tokens h100"))

    assert est.effective.seq_len == 2048


def test_the_reply_says_the_sequence_runs_and_how_to_cut_at_the_default() -> None:
    est = estimate(parse_query("8b lora 10k samples of 3000 tokens h100"))

    [line] = [a for a in est.assumptions if a.startswith("Dataset:")]
    assert "cut at 4,096 tokens, the smallest power of two above the average" in line
    assert "`seq 2048`" in line


def test_a_followup_doubles_the_sequence_the_samples_set() -> None:
    from bot.service import Service

    service = Service(workers=0)
    first = service.answer("8b lora 10k samples of 3000 tokens h100", None)

    doubled = service.answer("double the seq", first.request)

    assert doubled.changes == ["seq 4,096 → 8,192"]


def test_the_estimates_request_says_the_sequence_the_samples_set() -> None:
    est = estimate(parse_query("8b lora 10k samples of 3000 tokens h100"))

    assert est.request.seq_len == 4096 and "seq_len" not in est.request.model_fields_set


def test_much_longer_samples_also_say_how_to_cut_at_the_default() -> None:
    est = estimate(parse_query("8b lora 10k samples of 5000 tokens h100"))

    [line] = [a for a in est.assumptions if a.startswith("Dataset:")]
    assert "cut at 8,192 tokens, the smallest power of two above the average" in line
