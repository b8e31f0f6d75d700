"""The guard every YAML reader runs before PyYAML builds a node
(:func:`catalog.safe_yaml.check_events`): aliases (and, unless allowed, anchors),
collections nested past the limit and values past the cap are refused from the event
stream, as a :class:`~catalog.safe_yaml.YamlRefused` that says which rule, which line and
which name; the readers word it (tests/test_config_hostile.py,
tests/test_team_sheet_hostile.py, tests/test_trainconfig_hostile.py).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
import yaml

from catalog.safe_yaml import NAME_CHARS, Refusal, YamlRefused, check_events


def refused(text: str, **limits: Any) -> YamlRefused:
    limits.setdefault("max_depth", 16)
    with pytest.raises(YamlRefused) as caught:
        check_events(text, **limits)
    return caught.value


def nested(levels: int, leaf: str = "x: 1") -> str:
    """``levels`` mappings in block style, one a line, the last holding ``leaf``."""
    keys = "".join("  " * i + f"k{i}:\n" for i in range(levels - 1))
    return keys + "  " * (levels - 1) + leaf + "\n"


def test_plain_yaml_passes() -> None:
    text = "name: Acme\nprices:\n  h100: 2.49\n  l4: {price: 0.5, note: reserved}\nids: [1, 2]\n"

    check_events(text, max_depth=16, max_values=100)


def test_json_passes() -> None:
    check_events('{"prices": {"h100": 2.49}, "ids": [1, 2]}', max_depth=16)


def test_an_alias_is_refused_with_its_line() -> None:
    error = refused("a: &x [1, 2]\nb: *x\n", allow_anchors=True)

    assert (error.kind, error.line, error.name) == (Refusal.ALIAS, 2, "x")


def test_a_merge_key_is_refused_as_the_alias_it_is() -> None:
    error = refused("base: &b {x: 1}\nc:\n  <<: *b\n", allow_anchors=True)

    assert (error.kind, error.line, error.name) == (Refusal.ALIAS, 3, "b")


def test_an_undefined_alias_is_refused_as_an_alias() -> None:
    error = refused("a: *nope\n")

    assert (error.kind, error.name) == (Refusal.ALIAS, "nope")


def test_a_bare_anchor_is_refused_by_default() -> None:
    error = refused("a: 1\nb: &x [1, 2]\n")

    assert (error.kind, error.line, error.name) == (Refusal.ANCHOR, 2, "x")


def test_a_bare_anchor_passes_where_anchors_are_allowed() -> None:
    check_events("a: &x [1, 2]\n", max_depth=16, allow_anchors=True)


def test_a_long_alias_name_is_cut() -> None:
    name = "a" * 5000

    error = refused(f"a: &{name} 1\nb: *{name}\n", allow_anchors=True)

    assert error.name is not None and len(error.name) == NAME_CHARS
    assert error.name.startswith("a" * 100) and error.name.endswith("…")


def test_a_billion_laughs_document_is_refused_quickly() -> None:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for name, prev in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")

    began = time.monotonic()
    error = refused("\n".join(lines) + "\n", allow_anchors=True)

    assert (error.kind, error.line, error.name) == (Refusal.ALIAS, 2, "a")
    assert time.monotonic() - began < 1.0


def test_nesting_at_the_limit_passes() -> None:
    check_events(nested(16), max_depth=16)


def test_a_scalar_is_not_a_level_of_nesting() -> None:
    check_events("a: " + "[" * 15 + "1" + "]" * 15 + "\n", max_depth=16)


def test_nesting_past_the_limit_is_refused_at_the_line_of_the_first_collection_too_deep() -> None:
    error = refused(nested(20))

    assert (error.kind, error.line, error.name) == (Refusal.DEPTH, 17, None)


def test_flow_and_json_nesting_past_the_limit_is_refused() -> None:
    assert refused("[" * 3000 + "]" * 3000).kind is Refusal.DEPTH
    assert refused('{"a":' * 3000 + "1" + "}" * 3000).kind is Refusal.DEPTH


def test_nesting_past_the_limit_is_refused_before_any_node_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("a node was built")

    monkeypatch.setattr(yaml.composer.Composer, "compose_node", built)
    monkeypatch.setattr(yaml.constructor.BaseConstructor, "construct_object", built)

    assert refused("a: " + "[" * 100_000 + "]" * 100_000 + "\n").line == 1


def test_an_anchor_is_refused_before_the_nesting_it_opens() -> None:
    error = refused("a: " + "[" * 15 + "&x [1]" + "]" * 15 + "\n")  # the 17th level

    assert error.kind is Refusal.ANCHOR


def test_values_past_the_cap_are_refused_with_the_line_of_the_first_too_many() -> None:
    error = refused("a: 1\nb: 2\nc: [3, 4]\n", max_values=6)

    assert (error.kind, error.line) == (Refusal.VALUES, 3)


def test_keys_values_list_items_and_collections_each_count_as_one_value() -> None:
    text = "a: [1, 2]\n"  # the mapping, a, the list, 1 and 2

    check_events(text, max_depth=16, max_values=5)
    assert refused(text, max_values=4).kind is Refusal.VALUES


def test_values_are_not_counted_without_a_cap() -> None:
    check_events("[" + ", ".join(["1"] * 50_000) + "]", max_depth=16)


def test_every_document_of_a_stream_is_checked() -> None:
    error = refused("a: 1\n---\nb: &x 2\nc: *x\n", allow_anchors=True)

    assert (error.kind, error.line) == (Refusal.ALIAS, 4)


def test_text_that_is_not_yaml_raises_pyyamls_own_error() -> None:
    with pytest.raises(yaml.YAMLError, match="line 2"):
        check_events("a: [\n", max_depth=16)


def test_the_refusal_reads_neutrally_with_its_rule_name_and_line() -> None:
    error = refused("a: &x 1\nb: *x\n", allow_anchors=True)

    assert str(error) == "YAML alias x refused at line 2"
