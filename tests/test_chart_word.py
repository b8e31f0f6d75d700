"""The word ``chart`` in a query: taken out before parsing, it asks for the chart; the
request itself does not change."""

from __future__ import annotations

from bot.service import CHART_WORD, ReplyKind, Service, split_chart_word


def test_the_word_is_taken_out_in_any_case_and_place():
    assert split_chart_word("70b qlora CHART 50M tokens") == ("70b qlora 50M tokens", True)
    assert split_chart_word("chart, 8b") == ("8b", True)
    assert split_chart_word("8b lora") == ("8b lora", False)


def test_a_query_with_the_word_is_the_same_estimate_wanting_its_chart():
    service = Service()

    plain = service.answer("70b qlora 50M tokens h100")
    charted = service.answer("70b qlora chart 50M tokens h100")

    assert charted.kind is ReplyKind.ESTIMATE and charted.chart and not plain.chart
    assert charted.request == plain.request


def test_the_word_alone_in_a_thread_asks_for_that_estimates_chart_only():
    service = Service()
    previous = service.answer("8b qlora").request

    reply = service.answer("chart", previous)

    assert reply.kind is ReplyKind.CHART and reply.request == previous


def test_the_word_in_a_followup_changes_the_estimate_and_wants_the_chart():
    service = Service()
    previous = service.answer("8b qlora").request

    reply = service.answer("what if 8k seq chart", previous)

    assert reply.kind is ReplyKind.ESTIMATE and reply.chart
    assert reply.request.seq_len == 8192 and reply.changes == ["seq 2,048 → 8,192"]


def test_the_word_alone_without_an_estimate_says_how_to_ask():
    reply = Service().answer("chart")

    assert reply.kind is ReplyKind.ERROR and reply.word == CHART_WORD
    assert "70b qlora 50M tokens chart" in reply.text


def test_a_bad_query_with_the_word_is_still_the_parsers_error():
    reply = Service().answer("70b qlorra chart")

    assert reply.kind is ReplyKind.ERROR and not reply.chart and '"qlorra"' in reply.text
