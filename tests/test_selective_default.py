"""torchtitan checkpoints small models selectively unless the question says otherwise."""

from __future__ import annotations

from engine import Request, estimate
from engine.choices import Framework, Solve
from engine.profiles import PROFILES, changes_for, resolve
from engine.specs import Catalog
from tests.helpers import parsed


def _resolved(catalog: Catalog, request: Request) -> Request:
    return resolve(request, catalog.model(request.model).architecture)


def test_torchtitan_checkpoints_an_8b_model_selectively_when_nothing_is_said(
    catalog: Catalog,
) -> None:
    request = _resolved(catalog, Request(model="llama-3.1-8b", framework="torchtitan"))
    assert request.grad_checkpointing and request.selective_checkpointing


def test_torchtitan_checkpoints_a_70b_model_fully(catalog: Catalog) -> None:
    request = _resolved(catalog, Request(model="llama-3.1-70b", framework="torchtitan"))
    assert request.grad_checkpointing and not request.selective_checkpointing


def test_saying_checkpointing_means_whole_layers_under_torchtitan(catalog: Catalog) -> None:
    request = _resolved(catalog, parsed("llama-3.1-8b full torchtitan ckpt 8x h100"))
    assert request.grad_checkpointing and not request.selective_checkpointing


def test_saying_no_checkpointing_keeps_it_off_under_torchtitan(catalog: Catalog) -> None:
    request = _resolved(catalog, parsed("llama-3.1-8b full torchtitan no-ckpt 8x h100"))
    assert not request.grad_checkpointing and not request.selective_checkpointing


def test_no_other_framework_checkpoints_selectively_by_default(catalog: Catalog) -> None:
    for framework in Framework:
        if framework is Framework.TORCHTITAN:
            continue
        request = _resolved(catalog, Request(model="llama-3.2-1b", framework=framework))
        assert not request.selective_checkpointing, framework


def test_the_default_is_decided_again_for_another_model(catalog: Catalog) -> None:
    small = _resolved(catalog, Request(model="llama-3.1-8b", framework="torchtitan"))
    big = small.model_copy(update={"model": "llama-3.1-70b"})
    assert not _resolved(catalog, big).selective_checkpointing


def test_selective_memory_sits_between_full_checkpointing_and_none(catalog: Catalog) -> None:
    def gb(text: str) -> float:
        return estimate(parsed(text), catalog).memory.total

    base = "llama-3.1-8b full fsdp 8x h100 seq 8192 torchtitan"
    assert gb(f"{base} ckpt") < gb(base) < gb(f"{base} no-ckpt")


def test_the_reply_names_the_selective_default(catalog: Catalog) -> None:
    result = estimate(parsed("llama-3.1-8b full fsdp 8x h100 torchtitan"), catalog)
    framework_line = next(a for a in result.assumptions if a.startswith("Framework"))
    assert "selective (op) checkpointing" in framework_line
    arch = catalog.model("llama-3.1-70b").architecture
    big = resolve(Request(model="llama-3.1-70b", framework="torchtitan"), arch)
    assert not any("selective" in c for c in changes_for(big, arch=arch))


def test_the_largest_model_search_checkpoints_each_candidate_as_torchtitan_would(
    catalog: Catalog,
) -> None:
    asked = parsed("largest model llama full torchtitan 8x h100 seq 8192")
    assert asked.solve is Solve.MODEL
    result = estimate(asked, catalog)
    assert result.resolved is not None
    arch = catalog.model(result.resolved.model).architecture
    assert result.resolved.selective_checkpointing == (
        arch.total_params <= PROFILES[Framework.TORCHTITAN].selective_checkpointing_up_to
    )


def test_a_said_selective_survives_resolving_for_another_model(catalog: Catalog) -> None:
    asked = parsed("llama-3.1-8b lora hf selective 1x h100")
    once = _resolved(catalog, asked)
    again = _resolved(catalog, once.model_copy(update={"model": "llama-3.1-70b"}))
    assert again.selective_checkpointing


def test_the_largest_model_search_keeps_a_said_selective(catalog: Catalog) -> None:
    result = estimate(parsed("largest model llama lora hf selective 1x h100 seq 16384"),
                      catalog)
    assert result.solution is not None and result.solution.memory is not None
    assert result.memory.total == result.solution.memory.total


def test_the_json_names_the_selective_default(catalog: Catalog) -> None:
    result = estimate(parsed("llama-3.1-8b full fsdp 8x h100 torchtitan"), catalog)
    changes = result.to_json()["framework"]["changes"]
    assert any("selective (op) checkpointing" in c for c in changes)


def test_the_largest_model_search_offers_the_answers_own_checkpointing_change(
    catalog: Catalog,
) -> None:
    def raises(text: str) -> list[str]:
        solution = estimate(parsed(text), catalog).solution
        assert solution is not None
        return [r.change for r in solution.raises]

    tail = "full torchtitan 1x h100 seq 8192"
    named_big = raises(f"largest model llama-3.1-70b {tail}")
    assert "full checkpointing" in named_big
    assert named_big == raises(f"largest model llama-3.2-1b {tail}")


def test_a_selective_run_over_the_line_is_told_what_whole_layers_would_hold(
    catalog: Catalog,
) -> None:
    result = estimate(parsed("llama-3.1-8b full torchtitan 2x h100 seq 8192 fsdp 50M tokens"),
                      catalog)
    tip = next(w for w in result.warnings if "whole-layer checkpointing" in w)
    lead = result.options[0]
    assert f"keeps {lead.per_gpu_gb:.1f} GB per GPU" in tip and "slower" in tip
    full = estimate(parsed("llama-3.1-8b full torchtitan 2x h100 seq 8192 fsdp ckpt"), catalog)
    assert f"keeps {full.memory.total:.1f} GB (" in tip


def test_a_selective_run_that_fits_gets_no_checkpointing_tip(catalog: Catalog) -> None:
    result = estimate(parsed("llama-3.1-8b full torchtitan 8x h100 seq 8192 fsdp"), catalog)
    assert not any("whole-layer checkpointing" in w for w in result.warnings)


def test_the_checkpointing_tip_is_timed_even_where_selective_does_not_fit(
    catalog: Catalog,
) -> None:
    result = estimate(parsed("8b full torchtitan 16x h100 seq 32768 hsdp 50M tokens"), catalog)
    tip = next(w for w in result.warnings if "whole-layer checkpointing" in w)
    assert "slower" in tip


def test_no_checkpointing_tip_where_whole_layers_do_not_fit_either(catalog: Catalog) -> None:
    result = estimate(parsed("8b full torchtitan 2x rtx-4090 seq 32768 fsdp"), catalog)
    assert result.options and not result.options[0].fits
    assert not any("whole-layer checkpointing" in w for w in result.warnings)
