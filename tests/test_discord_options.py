"""``/ftcost``'s structured options merged with the free-text query."""

from __future__ import annotations

import pytest

from adapters.discord.commands import build_commands
from adapters.discord.options import NO_OPTIONS, Options, answer, build_request
from adapters.parse import QueryError, parse_query
from bot.service import ReplyKind, Service
from catalog.loader import default_catalog
from engine import Method
from engine.profiles import resolve

CATALOG = default_catalog()


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(workers=0)


def build(text: str, previous=None, **options):
    return build_request(text, Options(**options), previous, CATALOG)


def test_options_alone_make_a_request() -> None:
    request = build("", model="70b", method="qlora", tokens="50M", gpu="h100", seq="8k",
                    epochs=2.0)
    assert request == parse_query("70b qlora 50M tokens h100 seq 8k 2 epochs")


def test_a_largest_model_question_with_a_framework_option_reads_as_typed() -> None:
    request = build("largest model lora on 4090", framework="hf")
    assert request == parse_query("largest model lora on 4090 hf")


def test_an_option_naming_a_limits_answer_asks_at_it() -> None:
    previous = parse_query("8b lora max seq on h100")
    request = build("", previous, seq="8k")
    assert request.solve is None and request.seq_len == 8192


def test_options_and_text_combine() -> None:
    request = build("qlora 50M tokens", model="llama-3.1-70b", gpu="8x h100")
    assert request == parse_query("70b qlora 50M tokens 8x h100")


@pytest.mark.parametrize(
    ("option", "value", "field", "expected"),
    [
        ("tokens", "50M", "dataset_tokens", 50_000_000),
        ("tokens", "50M tokens", "dataset_tokens", 50_000_000),
        ("tokens", "1.2B", "dataset_tokens", 1_200_000_000),
        ("seq", "8k", "seq_len", 8192),
        ("seq", "seq 4096", "seq_len", 4096),
        ("epochs", 0.5, "epochs", 0.5),
        ("model", "meta-llama/Llama-3.1-70B", "model", "llama-3.1-70b"),
        ("model", "llama 3.1 8b", "model", "llama-3.1-8b"),
        ("model", "20b", "model", "synthetic-20b"),
        ("gpu", "a100-80gb-sxm", "gpu", "a100-80gb-sxm"),
        ("gpu", "8x a100", "gpu_count", 8),
    ],
)
def test_each_option_reads_like_the_query_language(option, value, field, expected) -> None:
    kwargs = {"model": "8b", option: value}
    assert getattr(build("", **kwargs), field) == expected


def test_same_value_twice_is_fine_different_values_conflict() -> None:
    assert build("70b qlora", model="llama-3.1-70b", method="qlora").method is Method.QLORA
    with pytest.raises(QueryError) as err:
        build("70b lora", method="full")
    message = str(err.value)
    assert "method option" in message and "LoRA" in message and "Full" in message
    with pytest.raises(QueryError, match="sequence length 8,192 but the seq option says 4,096"):
        build("8b seq 8k", seq="4k")
    with pytest.raises(QueryError, match="model"):
        build("8b", model="70b")


def test_a_bad_option_names_the_option_and_the_word() -> None:
    with pytest.raises(QueryError) as err:
        build("", model="8b", gpu="h1000")
    assert "gpu option" in str(err.value) and err.value.word == "h1000"
    assert "h100" in err.value.suggestions
    with pytest.raises(QueryError, match="tokens option"):
        build("", model="8b", tokens="lots")
    with pytest.raises(QueryError, match="model option"):
        build("", model="70b qlora")  # more than a model
    with pytest.raises(QueryError, match="out of range"):
        build("", model="8b", epochs=5000.0)


def test_without_a_model_the_parser_asks_which() -> None:
    with pytest.raises(QueryError, match="Which model"):
        build("qlora", tokens="50M")


def test_followups_change_the_previous_request() -> None:
    previous = parse_query("70b qlora 50M tokens 4x h100")
    request = build("what if", previous, seq="8k")
    assert request == previous.model_copy(update={"seq_len": 8192})
    moved = build("", previous, gpu="a100")  # a card without a count: the count goes
    assert moved.gpu == "a100-80gb-sxm" and moved.gpu_count is None
    counted = build("h100", previous, gpu="8x h100")
    assert counted.gpu_count == 8


def test_answer_routes_through_the_service(service: Service) -> None:
    plain = answer(service, "70b qlora 50M tokens h100")
    assert plain.kind is ReplyKind.ESTIMATE
    assert plain.request == service.answer("70b qlora 50M tokens h100").request
    assert answer(service, "help", Options(model="8b")).kind is ReplyKind.HELP
    assert answer(service, "gpus").kind is ReplyKind.GPUS
    assert answer(service, "", NO_OPTIONS).kind is ReplyKind.HELP
    bad = answer(service, "70b", Options(method="full", tokens="many"))
    assert bad.kind is ReplyKind.ERROR and "tokens option" in bad.text

    previous = parse_query("8b lora 20M tokens")
    follow = answer(service, "", Options(method="qlora"), previous)
    assert follow.kind is ReplyKind.ESTIMATE and follow.changes == ["method LoRA → QLoRA"]
    fresh = answer(service, "new 70b", Options(method="full"), previous)
    assert fresh.request is not None and fresh.request.model == "llama-3.1-70b"
    assert fresh.previous is None and fresh.request.dataset_tokens is None


def test_options_describe_themselves() -> None:
    assert Options(model="70b", epochs=2.0, tokens=" 50M ").describe() == (
        "model:70b tokens:50M epochs:2"
    )
    assert not Options().given and Options(seq="8k").given


def test_a_follow_up_keeps_unsaid_fields_for_the_new_framework_to_set() -> None:
    previous = parse_query("8b lora 20M tokens")
    request = build_request("", Options(framework="hf"), previous, default_catalog())
    assert "lora_dropout" not in request.model_fields_set
    assert resolve(request).lora_dropout == 0.05  # hf's, not the bare default


def test_the_model_option_takes_a_hub_id_with_its_longest_revision() -> None:
    class Handler:
        async def handle_ftcost(self, *args: object) -> None: ...
        async def handle_help(self, *args: object) -> None: ...

    [ftcost] = [c for c in build_commands(Handler()) if c.name == "ftcost"]  # type: ignore[arg-type]
    option = next(p for p in ftcost.parameters if p.name == "model")
    longest = len("https://huggingface.co/") + 96 + 1 + 200
    assert option.max_value is not None and option.max_value >= longest  # string: length


def test_steps_in_the_text_count_the_cards_of_the_gpu_option() -> None:
    request = build("8b lora 1000 steps", gpu="4x a100")
    assert request == parse_query("8b lora 1000 steps 4x a100")
    assert request.dataset_tokens == 1000 * 4 * 2048


def test_a_gpu_option_in_a_thread_recounts_the_steps_as_the_words_would() -> None:
    previous = parse_query("8b lora 1000 steps 4x a100")
    request = build("", previous, gpu="8x a100")
    assert request.dataset_tokens == 1000 * 8 * 2048


def test_a_model_option_in_a_thread_drops_how_the_earlier_model_was_named() -> None:
    previous = parse_query("qwen 72b lora 50M tokens h100")
    assert previous.model_pick is not None
    request = build("", previous, model="llama-3.1-8b")
    assert request.model == "llama-3.1-8b" and request.model_pick is None


def test_an_option_and_the_text_giving_the_run_twice_are_refused_as_typed() -> None:
    with pytest.raises(QueryError, match="once"):
        build("8b lora 1000 steps 4x a100", tokens="50M")


def test_a_gpu_option_on_a_config_recounts_its_max_steps_on_those_cards() -> None:
    from adapters.discord.configs import config_builder
    from adapters.trainconfig import read_config

    config = read_config(
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nsequence_len: 2048\n"
        "micro_batch_size: 2\ngradient_accumulation_steps: 1\nmax_steps: 100\n",
        "axolotl.yml",
    )
    build_on = config_builder(config, Options(gpu="4x h100"))
    request = build_on("", None, CATALOG)
    assert request.gpu_count == 4
    assert request.dataset_tokens == 100 * 4 * 2 * 2048


def test_an_option_that_says_more_than_its_field_names_what_else_it_says() -> None:
    with pytest.raises(QueryError) as caught:
        build("", model="8b", seq="8k bs 4")

    assert caught.value.message.startswith("The seq option takes only a sequence length")
    assert 'also says batch: put that in the query option' in caught.value.message


def test_options_that_change_nothing_are_named_not_an_empty_quote(service: Service) -> None:
    previous = parse_query("70b qlora 50M tokens h100")
    reply = answer(service, "", Options(method="qlora"), previous)
    assert reply.kind is ReplyKind.ERROR
    assert 'already has what "method:qlora" says' in reply.text
    with_words = answer(service, "what if", Options(gpu="h100"), previous)
    assert 'already has what "what if gpu:h100" says' in with_words.text


@pytest.mark.parametrize("text", ["new", "new:", "New.", "new chart"])
def test_new_alone_beside_options_is_a_new_question_from_them(
    service: Service, text: str
) -> None:
    previous = parse_query("70b qlora 50M tokens h100")
    for base in (previous, None):
        reply = answer(service, text, Options(model="8b"), base)
        assert reply.kind is ReplyKind.ESTIMATE, reply.text
        assert reply.request is not None and reply.request.model == "llama-3.1-8b"
        assert reply.previous is None and reply.request.dataset_tokens is None
    assert "new" in answer(service, "new", NO_OPTIONS, previous).text  # still asks what


@pytest.mark.parametrize(
    ("options", "typed"),
    [
        ({"tokens": "20M samples"}, '"20M samples"'),
        ({"seq": "max"}, '"max"'),
        ({"seq": "longest"}, '"longest"'),
        ({"seq": "8k samples"}, '"8k samples"'),
        ({"tokens": "8x h100"}, '"8x h100"'),
    ],
)
def test_an_option_error_quotes_the_value_not_a_word_the_option_added(
    options: dict[str, str], typed: str
) -> None:
    with pytest.raises(QueryError) as caught:
        build("", model="8b", **options)
    message = caught.value.message
    assert typed in message
    assert '"tokens" needs' not in message and '"seq" needs' not in message
    name = next(iter(options))
    assert f"Write the {name} option like" in message


def test_a_whole_number_of_epochs_is_quoted_as_typed() -> None:
    with pytest.raises(QueryError) as caught:
        build("", model="8b", epochs=1234567.0)
    assert '"1234567"' in caught.value.message
    assert Options(epochs=0.5).describe() == "epochs:0.5"


def test_options_read_as_the_words_they_stand_for() -> None:
    options = Options(model="70b", tokens="50M", seq="8k", epochs=2.0, method="qlora")
    assert parse_query(options.as_words(default_catalog())) == build("", **{
        "model": "70b", "tokens": "50M", "seq": "8k", "epochs": 2.0, "method": "qlora"})


def test_an_option_that_states_its_own_unit_reads_as_the_same_words() -> None:
    options = Options(model="8b", tokens="50M tokens")
    assert parse_query(options.as_words(default_catalog())) == build("", model="8b",
                                                                     tokens="50M tokens")


def test_the_query_options_limit_says_what_the_parser_reads() -> None:
    import ast
    from pathlib import Path

    from adapters.discord import limits
    from adapters.parse import MAX_QUERY_CHARS

    source = Path(limits.__file__).read_text(encoding="utf-8")
    body = ast.parse(source).body
    index = next(i for i, node in enumerate(body) if isinstance(node, ast.AnnAssign)
                 and getattr(node.target, "id", "") == "MAX_OPTION_STRING")
    doc = body[index + 1].value.value  # type: ignore[attr-defined]
    assert f"{MAX_QUERY_CHARS:,}" in doc and "500 characters" not in doc
    assert limits.MAX_OPTION_STRING <= MAX_QUERY_CHARS
