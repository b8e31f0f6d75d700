"""``org/name@rev`` references and which query words are Hub models."""

from __future__ import annotations

import pytest

from catalog.hub import HubError, HubErrorKind, HubRef, hub_ref_for_word, needs_hub


@pytest.mark.parametrize(
    ("text", "repo", "revision", "model_id"),
    [
        ("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B", "main", "Qwen/Qwen2.5-7B"),
        ("acme/m@v1.0", "acme/m", "v1.0", "acme/m@v1.0"),
        ("acme/m@refs/pr/3", "acme/m", "refs/pr/3", "acme/m@refs/pr/3"),
        ("https://huggingface.co/acme/m", "acme/m", "main", "acme/m"),
        ("hf.co/acme/m_2@dev", "acme/m_2", "dev", "acme/m_2@dev"),
    ],
)
def test_references_are_read(text, repo, revision, model_id):
    ref = HubRef.parse(text)

    assert (ref.repo, ref.revision, ref.id) == (repo, revision, model_id)


def test_the_revision_is_quoted_in_the_resolve_path():
    assert HubRef.parse("acme/m@refs/pr/3").path("config.json") == (
        "/acme/m/resolve/refs%2Fpr%2F3/config.json"
    )


@pytest.mark.parametrize("text", ["acme/m@", "acme/m@../x", "acme/m@-x", "acme/m@a b"])
def test_a_bad_revision_says_what_follows_the_at_sign(text):
    with pytest.raises(HubError) as info:
        HubRef.parse(text)

    assert info.value.kind is HubErrorKind.BAD_REF
    assert 'after "@" comes a branch, tag or commit of acme/m' in str(info.value)


@pytest.mark.parametrize("text", ["acme", "a--b/c", "acme/-x", "/x", "acme/m/extra"])
def test_a_malformed_repository_id_is_a_bad_reference(text):
    with pytest.raises(HubError) as info:
        HubRef.parse(text)

    assert "is not a Hugging Face model id: write it as org/name" in str(info.value)


@pytest.mark.parametrize("word", ["acme/llama-ft", "Acme/X@main", "huggingface.co/acme/x"])
def test_org_name_words_outside_the_catalog_are_hub_models(word, catalog):
    assert hub_ref_for_word(word, catalog) is not None


@pytest.mark.parametrize(
    "word",
    [None, "", "qlorra", "2.50/hr", "$2.50/hr", "1/2", "meta-llama/Llama-3.1-8B",
     "Qwen/Qwen2.5-7B-Instruct", "https://huggingface.co/meta-llama/Llama-3.1-8B"],
)
def test_catalog_models_numbers_and_plain_words_are_not(word, catalog):
    assert hub_ref_for_word(word, catalog) is None


def test_a_stored_catalog_model_id_needs_no_hub(catalog):
    assert needs_hub("llama-3.1-8b", catalog) is None
    assert needs_hub("synthetic-20b", catalog) is None
    assert needs_hub("acme/x@v2", catalog) == HubRef("acme/x", "v2", explicit_revision=True)
