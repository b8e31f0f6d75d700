"""A config uploaded in chat over 64 KB is refused in the same words as ``--config``.

The Slack and Discord front ends refuse an oversize file before or while downloading it
with :func:`bot.config_questions.too_large`, which is the reader's own
(:func:`adapters.trainconfig.load.too_large`): the real size where it is known, "larger
than 64 KB" where the download was cut off.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters.trainconfig import MAX_CONFIG_BYTES, ConfigError
from adapters.trainconfig.ask import read_config_file
from bot.config_questions import read_shared_config, too_large

ADVICE = "Share the training config itself, without datasets inlined."


def refused_file(path: str) -> str:
    with pytest.raises(ConfigError) as info:
        read_config_file(path)
    return str(info.value)


def test_an_upload_cut_off_while_downloading_is_said_to_be_larger_than_64_kb() -> None:
    assert str(too_large("lying.yml")).startswith(
        "lying.yml is larger than 64 KB; ftcost reads configs up to 64 KB (an axolotl YAML"
    )


def test_an_upload_of_known_size_gives_its_size_in_kb() -> None:
    assert str(too_large("big.yml", 100 * 1024)).startswith(
        "big.yml is 100 KB; ftcost reads configs up to 64 KB"
    )


def test_an_upload_refusal_ends_with_how_to_share_the_config() -> None:
    assert str(too_large("big.yml", 100 * 1024)).endswith(ADVICE)


def test_an_upload_and_the_config_flag_word_a_large_file_alike(tmp_path: Path) -> None:
    big = tmp_path / "big.yml"
    big.write_bytes(b"base_model: x/y\n" + b"#" * (200 * 1024 - 16))

    assert str(too_large(str(big), big.stat().st_size)) == refused_file(str(big))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_upload_of_unknown_size_and_an_endless_config_file_are_worded_alike() -> None:
    assert str(too_large("/dev/zero")) == refused_file("/dev/zero")


def test_a_pasted_config_over_64_kb_is_said_to_be_larger_than_64_kb() -> None:
    with pytest.raises(ConfigError) as info:
        read_shared_config(b"base_model: x/y\n" + b"#" * MAX_CONFIG_BYTES, "the code block")

    assert str(info.value) == str(too_large("the code block"))
