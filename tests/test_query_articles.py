"""``a`` / ``an`` as ML engineers say it, against the shipped catalog, one behaviour per
test: an article right before a card is one card, before a node one node; anywhere else
it is filler. Also hardware and batch phrasings said with one: ``a DGX H100`` (a node of
8) and ``a global batch of 128``."""

from __future__ import annotations

import pytest

from adapters.parse import parse_query
from catalog.loader import default_catalog
from engine.choices import Solve
from tests.helpers import fields, followup, parsed, refused

CAT = default_catalog()


# --- an article before a card: one card ----------------------------------------------------

def test_an_article_before_a_card_is_one_card() -> None:
    request = parsed("8b lora on 2M tokens with max_seq_length 4096 on a 4090")
    assert (request.gpu, request.gpu_count) == ("rtx-4090", 1)


def test_an_article_reads_as_the_count_one_does() -> None:
    assert fields("8b lora 2M tokens on a 4090") == fields("8b lora 2M tokens on 1x 4090")


def test_an_before_a_card_with_its_memory_is_one_card_of_that_variant() -> None:
    request = parsed("8b lora on an a100 40gb")
    assert (request.gpu, request.gpu_count) == ("a100-40gb-sxm", 1)


@pytest.mark.parametrize(("text", "card"), [("8b lora on an a100", "a100-80gb-sxm"),
                                            ("8b lora on an a6000", "rtx-a6000"),
                                            ("8b lora on an a10g", "a10g")])
def test_a_card_whose_name_starts_with_a_is_still_one_card(text: str, card: str) -> None:
    request = parsed(text)
    assert (request.gpu, request.gpu_count) == (card, 1)


def test_a_card_named_with_its_makers_word_after_an_article_is_one_card() -> None:
    request = parsed("8b lora on a geforce rtx 4090")
    assert (request.gpu, request.gpu_count) == ("rtx-4090", 1)


def test_a_count_after_the_card_says_how_many_not_the_article() -> None:
    assert parsed("8b lora on an h100 x8").gpu_count == 8


def test_a_count_after_the_cards_own_memory_says_how_many() -> None:
    assert parsed("8b lora on a rtx 4090 24gb x2").gpu_count == 2


def test_a_count_said_elsewhere_wins_over_an_article() -> None:
    assert parsed("8b lora on a 4090 2x 4090").gpu_count == 2


def test_a_launchers_process_count_wins_over_an_article() -> None:
    assert parsed("torchrun --nproc_per_node 8 8b lora on an h100").gpu_count == 8


def test_gpus_counted_before_an_article_are_that_many_of_its_card() -> None:
    request = parsed("8b lora 8 gpus on a h100")
    assert request.gpu_count == 8 and request.gpu == "h100-sxm"


def test_an_article_and_the_same_count_agree() -> None:
    assert parsed("8b lora on a 4090 1x 4090").gpu_count == 1


def test_a_card_without_an_article_still_leaves_the_count_to_the_estimate() -> None:
    assert parsed("8b lora on 4090").gpu_count is None


def test_a_card_after_instead_of_sets_no_count() -> None:
    request = parsed("8b lora h100 instead of a 4090")
    assert (request.gpu, request.gpu_count) == ("h100-sxm", None)


def test_a_fewest_cards_question_takes_only_the_card_from_an_article() -> None:
    request = parsed("fewest cards 70b qlora on an h100")
    assert (request.solve, request.gpu, request.gpu_count) == (Solve.GPU_COUNT, "h100-sxm",
                                                               None)


def test_a_largest_model_question_on_a_card_asks_for_one_card() -> None:
    request = parsed("largest model llama qlora on a 4090")
    assert (request.solve, request.gpu_count) == (Solve.MODEL, 1)


def test_a_followup_with_an_article_is_one_card() -> None:
    request = followup("8b lora 50M tokens 4x a100", "what if on a 4090")
    assert (request.gpu, request.gpu_count) == ("rtx-4090", 1)


def test_a_followup_on_fewest_cards_keeps_the_question_for_the_new_card() -> None:
    request = followup("fewest cards 70b qlora h100", "what about on an a100")
    assert (request.solve, request.gpu, request.gpu_count) == (
        Solve.GPU_COUNT, "a100-80gb-sxm", None)


# --- an article anywhere else ---------------------------------------------------------------

def test_an_article_before_a_model_size_is_filler() -> None:
    request = parsed("a 70b model lora on 4x h100")
    assert (request.model, request.gpu_count) == ("llama-3.1-70b", 4)


def test_an_article_before_a_batch_is_filler() -> None:
    request = parsed("8b lora a batch of 8 on 2x 4090")
    assert (request.micro_batch, request.gpu_count) == (8, 2)


def test_a_pair_of_cards_stays_two() -> None:
    assert parsed("8b lora a pair of 4090s").gpu_count == 2


def test_an_article_before_an_alpha_after_the_rank_is_filler() -> None:
    request = parsed("8b lora r 8 a 16 h100")
    assert (request.lora_rank, request.gpu_count) == (8, None)


# --- an article before a node: one node -----------------------------------------------------

@pytest.mark.parametrize("text", ["70b full a node of h100", "70b full a h100 node",
                                  "70b full an h100 server", "70b full a box of 8 h100s"])
def test_an_article_before_a_node_is_one_node_of_its_machine(text: str) -> None:
    request = parsed(text)
    assert (request.gpu, request.gpu_count, request.nodes) == ("h100-sxm", 8, 1)


def test_an_article_before_a_counted_node_keeps_its_count() -> None:
    request = parsed("70b full an 8x h100 box")
    assert (request.gpu_count, request.nodes) == (8, 1)


def test_an_article_before_a_node_after_cards_says_per_node() -> None:
    request = parsed("70b full 2 nodes with 8 h100s a node")
    assert (request.gpu_count, request.nodes) == (16, 2)


def test_a_cluster_is_never_read_as_one_card() -> None:
    assert 'I don\'t know "cluster"' in refused("70b full a cluster of h100s").message


# --- a DGX: one node of 8 of its card --------------------------------------------------------

@pytest.mark.parametrize(("text", "card"), [("70b lora 10M tokens dgx h100", "h100-sxm"),
                                            ("70b lora 10M tokens a DGX A100", "a100-80gb-sxm"),
                                            ("70b lora 10M tokens dgx-b200", "b200"),
                                            ("70b lora 10M tokens nvidia dgx h200", "h200-sxm")])
def test_a_dgx_is_one_node_of_eight_of_its_card(text: str, card: str) -> None:
    request = parsed(text)
    assert (request.gpu, request.gpu_count, request.nodes) == (card, 8, 1)


def test_a_dgx_names_its_cards_memory_variant() -> None:
    assert parsed("70b lora dgx a100 40gb").gpu == "a100-40gb-sxm"


@pytest.mark.parametrize("text", ["70b full 2 dgx h100", "70b full 2x dgx h100s",
                                  "70b full two dgx h100 nodes"])
def test_a_count_of_dgx_machines_is_that_many_nodes(text: str) -> None:
    request = parsed(text)
    assert (request.gpu_count, request.nodes) == (16, 2)


def test_a_dgx_and_another_card_count_conflict() -> None:
    assert "both set the GPU count" in refused("70b lora dgx h100 4x h100").message


def test_a_dgx_of_another_card_asks_for_its_count() -> None:
    err = refused("70b lora dgx v100")
    assert err.message.startswith('"dgx v100": a DGX is read as one node of 8 cards')
    assert '"8x v100"' in err.message


def test_a_dgx_without_its_card_asks_for_the_cards() -> None:
    assert '"8x h100"' in refused("70b lora 10M tokens dgx").message


# --- a global batch of N --------------------------------------------------------------------

def test_a_global_batch_of_a_number_is_the_global_batch() -> None:
    request = parsed("70b lora 10M tokens 8x h100 with 3 epochs and a global batch of 128")
    assert (request.grad_accum, request.epochs) == (16, 3.0)


def test_a_global_batch_of_reads_as_global_batch_does() -> None:
    assert fields("70b lora 8x h100 global batch size of 64 bs 4") == fields(
        "70b lora 8x h100 global batch size 64 bs 4")


def test_an_effective_batch_of_a_number_is_the_global_batch() -> None:
    assert parse_query("8b lora effective batch of 32 bs 2 8x h100", CAT).grad_accum == 2


def test_a_global_batch_of_tokens_is_refused_as_a_batch_in_tokens() -> None:
    err = refused("70b lora 8x h100 a global batch of 1M tokens")
    assert err.message.startswith('"global batch of 1M tokens": a batch counted in tokens')


def test_a_global_batch_of_nothing_still_needs_a_number() -> None:
    assert '"global batch" needs a number' in refused("70b lora 8x h100 global batch of").message
