"""The platform-neutral service: one call from text to a reply, follow-ups on a
thread's context, what changed."""

from __future__ import annotations

import pytest

from adapters.parse import parse_query
from bot.service import (
    Context,
    Reply,
    ReplyKind,
    Service,
    describe_changes,
    request_from_json,
    request_to_compact_json,
)
from bot.store import ThreadKey
from bot.store_sqlite import SQLiteStore
from engine import Method, Request


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(workers=0)


def test_a_query_becomes_an_estimate_reply(service):
    reply = service.answer("70b qlora 50M tokens h100")

    assert reply.kind is ReplyKind.ESTIMATE and reply.is_public
    assert reply.request.model == "llama-3.1-70b" and reply.request.method is Method.QLORA
    assert reply.report.request == reply.request
    assert reply.previous is None and reply.changes == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [("", ReplyKind.HELP), ("help", ReplyKind.HELP), ("  HELP? ", ReplyKind.HELP),
     ("help me", ReplyKind.HELP), ("help with models", ReplyKind.HELP),
     ("models", ReplyKind.MODELS), ("gpus", ReplyKind.GPUS), ("cards", ReplyKind.GPUS)],
)
def test_help_and_listings(service, text, kind):
    reply = service.answer(text)

    assert reply.kind is kind and not reply.is_public
    assert reply.text and reply.title


def test_help_carries_the_examples(service):
    reply = service.answer("help")

    assert reply.examples and reply.examples[0] in reply.text


def test_a_bad_query_is_an_error_reply_with_word_and_suggestions(service):
    reply = service.answer("70b qlorra")

    assert reply.kind is ReplyKind.ERROR and not reply.is_public
    assert reply.word == "qlorra" and "qlora" in reply.suggestions
    assert "Example:" in reply.text


def test_a_followup_changes_only_what_it_names(service):
    first = service.answer("70b qlora 50M tokens h100").request

    reply = service.answer("what if 8k seq and full", first)

    assert reply.request.seq_len == 8192 and reply.request.method is Method.FULL
    assert reply.request.gpu == first.gpu and reply.previous == first
    assert reply.changes == ["method QLoRA → Full", "seq 2,048 → 8,192"]


def test_new_in_a_thread_starts_over(service):
    first = service.answer("70b qlora 50M tokens h100").request

    reply = service.answer("new 8b lora", first)

    assert reply.request.model == "llama-3.1-8b" and reply.request.dataset_tokens is None
    assert reply.changes == []


@pytest.mark.parametrize("text", ["`new` 8b lora", "`new 8b lora`"])
def test_new_pasted_as_code_starts_over(service, text):
    first = service.answer("70b qlora 50M tokens h100").request

    reply = service.answer(text, first)

    assert reply.request is not None and reply.request.model == "llama-3.1-8b"
    assert reply.changes == []


def test_new_without_an_earlier_estimate_is_a_question(service):
    reply = service.answer("new 8b lora")

    assert reply.request is not None and reply.request.model == "llama-3.1-8b"


def test_new_alone_in_a_thread_asks_for_the_question_after_it(service):
    first = service.answer("70b qlora 50M tokens h100").request

    reply = service.answer("new", first)

    assert reply.kind is ReplyKind.ERROR and "say the question after it" in reply.text


def test_describe_changes_words_values_for_people():
    old = Request(model="llama-3.1-8b")
    new = Request(model="llama-3.1-8b", gpu="h100-sxm", gpu_count=4, dataset_tokens=2_000_000,
                  mfu=0.4, price_per_gpu_hour=2.5, offload=True)

    assert describe_changes(old, new) == [
        "offload off → on",
        "card any → h100-sxm",
        "cards auto → 4",
        "tokens unset → 2M",
        "MFU 35% → 40%",
        "price catalog's → $2.50/hr",
    ]


def test_a_changed_value_reads_from_what_the_framework_ran_not_the_bare_default():
    old = Request(model="llama-3.1-8b", method=Method.LORA, framework="hf")
    new = old.model_copy(update={"lora_dropout": 0.1})

    assert describe_changes(old, new) == ["LoRA dropout 0.05 → 0.1"]


def test_turning_off_a_framework_default_is_a_change():
    old = Request(model="llama-3.1-8b", method=Method.LORA, framework="hf")
    new = Request(model="llama-3.1-8b", method=Method.LORA, framework="hf", fp32_adapters=False)

    assert describe_changes(old, new) == ["FP32 adapters on → off"]


def test_a_followup_to_a_bigger_model_says_torchtitan_checkpoints_it_fully(service):
    first = service.answer("8b full torchtitan 8x h100").request

    reply = service.answer("what if 70b", first)

    assert reply.changes == [
        "model llama-3.1-8b → llama-3.1-70b", "selective checkpointing on → off",
    ]


def test_changes_on_a_limit_answer_read_from_the_answers(service):
    first = service.answer("8b lora max seq on h100").request

    reply = service.answer("what if qlora", first)

    before = service.answer("8b lora max seq on h100").estimate.request.seq_len
    after = reply.estimate.request.seq_len
    assert after > before
    assert reply.changes == ["method LoRA → QLoRA", f"seq {before:,} → {after:,}"]


def test_naming_the_answer_in_a_followup_ends_the_limit_question(service):
    first = service.answer("8b lora max seq on h100").request

    reply = service.answer("what if seq 8192", first)

    assert reply.estimate.request.seq_len == 8192
    assert reply.changes[-1] == "question max seq → estimate"


def test_a_full_fine_tunes_changes_leave_out_adapter_settings(service):
    first = service.answer("8b full torchtitan").request

    reply = service.answer("what if hf", first)

    assert reply.changes == ["selective checkpointing on → off", "framework torchtitan → hf"]


def test_compact_request_json_round_trips():
    request = Request(model="llama-3.1-70b", method=Method.LORA, seq_len=8192)

    text = request_to_compact_json(request)

    assert text == '{"model":"llama-3.1-70b","method":"lora","seq_len":8192}'
    assert request_from_json(text) == request


async def test_handle_uses_the_thread_context_for_followups(tmp_path):
    async with SQLiteStore(tmp_path / "s.sqlite3") as store:
        service = Service(store)
        try:
            ctx = Context("discord", channel="C9", thread="T9", user="U1")
            first = await service.handle("8b lora 10M tokens", ctx)
            assert first.kind is ReplyKind.ESTIMATE
            assert ctx.key == ThreadKey("discord", "C9", "T9")
            await service.remember(ctx.key, first, "M1")

            followup = Context("discord", channel="C9", thread="T9", user="U2", followup=True)
            second = await service.handle("with qlora", followup)
            unknown = await service.handle("with qlora", Context("discord", "C9", "T0",
                                                                  followup=True))
        finally:
            service.close()

        assert second.request.method is Method.QLORA
        assert second.request.dataset_tokens == 10_000_000
        assert unknown is None
        assert (await store.get_thread(ctx.key)).message_id == "M1"


async def test_remember_ignores_non_estimates_and_stateless_services(tmp_path):
    async with SQLiteStore(tmp_path / "s.sqlite3") as store:
        key = ThreadKey("slack", "C1", "1")
        await Service(store, workers=0).remember(key, Reply(ReplyKind.HELP, text="x"), "1")
        await Service(None, workers=0).remember(key, Service(workers=0).answer("8b"), "1")

        assert await store.get_thread(key) is None


async def test_run_uses_the_worker_thread():
    import threading

    service = Service(workers=1)
    try:
        name = await service.run(lambda: threading.current_thread().name)
    finally:
        service.close()

    assert name.startswith("ftcost-estimate")


def test_naming_the_framework_picked_kernels_is_a_change():
    old = Request(model="llama-3.1-8b", method=Method.LORA, framework="hf", gpu="h100-sxm")
    new = old.model_copy(update={"native_attention": False})

    assert describe_changes(old, new) == ["native attention kernels framework's pick → off"]


def test_leaving_the_kernels_to_the_framework_again_is_a_change():
    old = Request(model="llama-3.1-8b", method=Method.LORA, native_attention=True)
    new = Request(model="llama-3.1-8b", method=Method.LORA)

    assert describe_changes(old, new) == ["native attention kernels on → framework's pick"]


@pytest.mark.parametrize("text", [
    "?", "help", "what if seq 8k?", "qlora", "chart", "new 70b qlora", "prices",
    "set framework hf", "models",
])
def test_a_thread_message_for_the_bot_reads_as_a_question(service, text):
    assert service.reads_as_question(text, parse_query("8b lora 20M tokens"))


@pytest.mark.parametrize("text", ["o/n@", "what if org/x@v..1"])
def test_a_malformed_hub_revision_in_a_thread_reads_as_a_question(service, text):
    """It is answered with what is malformed, rather than raising out of the handler."""
    assert service.reads_as_question(text, parse_query("8b lora 20M tokens"))


@pytest.mark.parametrize("text", ["nice", "thanks!", "ok cool, looks good"])
def test_thread_chatter_does_not_read_as_a_question(service, text):
    assert not service.reads_as_question(text, parse_query("8b lora 20M tokens"))


@pytest.mark.parametrize("text", ["\u200bhelp", "\ufeffhelp", "ＨＥＬＰ", "he\u200blp"])
def test_a_command_word_is_known_however_it_was_pasted(service, text):
    assert service.answer(text).kind is ReplyKind.HELP


def test_a_number_form_is_still_refused_by_name_not_read_as_other_digits(service):
    reply = service.answer("8b lora 10² tokens")

    assert reply.kind is ReplyKind.ERROR and '"²" is not a digit I read' in reply.text


@pytest.mark.parametrize("text", ["qlora", "same but 70b", "on h100"])
def test_a_followup_that_changes_nothing_says_so(service, text):
    earlier = parse_query("70b qlora 50M tokens h100")

    reply = service.answer(text, earlier)

    assert reply.kind is ReplyKind.ERROR and reply.request is None
    assert reply.text.startswith("Nothing changed: the estimate above already has what")
    assert "`what if 8k seq?`" in reply.text


def test_a_chart_followup_that_changes_nothing_is_the_estimates_chart(service):
    earlier = parse_query("70b qlora 50M tokens h100")

    reply = service.answer("qlora chart", earlier)

    assert reply.kind is ReplyKind.CHART and reply.request == earlier
