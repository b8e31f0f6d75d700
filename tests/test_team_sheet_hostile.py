"""A team price sheet is outside text: whatever it holds, reading it either gives usable
rates or a :class:`~catalog.team_sheets.MalformedSheet` that names the line and key,
says what is wrong and how to write it; and its free text (``name``, ``note``) reaches
every estimate's price line as one plain line.

* A value YAML cannot build (a date past the calendar, ``!!float 'abc'``, an integer of
  thousands of digits) refuses the sheet as malformed, never raises a bare ValueError
  out of the parse (the refresh catches only source failures).
* A rate is a plain decimal number: YAML 1.1's other spellings (``1:30`` is base 60, so
  $90/hr; ``010`` is octal; ``0x2``; ``1_5``) are refused, the previous rate kept.
* ``name`` and ``note`` lose control and format characters (a newline that forges a
  line, a right-to-left override) and markdown link syntax (a masked link).
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime

import pytest

from adapters.parse import parse_query
from adapters.report import build_report
from catalog.price_build import TeamFetch, build_snapshot
from catalog.price_snapshot import TeamSheet
from catalog.prices import priced_catalog
from catalog.team_sheets import MalformedSheet, ParsedSheet, parse_team_sheet
from engine import estimate
from engine.specs import Catalog

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
WORKSPACE = "slack:T1"


def sheet(catalog: Catalog, text: str) -> ParsedSheet:
    return parse_team_sheet(text, catalog.find_gpu)


def unseen(text: str) -> list[str]:
    """The control, format and separator characters of ``text``."""
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")]


# -- values YAML cannot build ------------------------------------------------------------


def test_a_rate_that_is_a_date_past_the_calendar_refuses_the_sheet_naming_line_and_key(
    catalog: Catalog,
) -> None:
    with pytest.raises(MalformedSheet) as caught:
        sheet(catalog, "name: Acme\nprices:\n  h100: 2024-13-45\n")

    message = str(caught.value)
    assert message.startswith("line 3, 'h100:': 2024-13-45 cannot be read")
    assert "not one (month must be in 1..12)" in message
    assert "plain number of dollars per GPU-hour, e.g. `h100: 2.49`" in message


def test_a_name_that_is_an_impossible_date_refuses_the_sheet_and_says_to_quote_it(
    catalog: Catalog,
) -> None:
    with pytest.raises(MalformedSheet, match=r"^line 1, 'name:': 2024-02-30 cannot be read.*"
                       r'write text in quotes, e.g. `name: "2024-02-30"`'):
        sheet(catalog, "name: 2024-02-30\nprices: {h100: 2}\n")


def test_a_note_that_is_an_impossible_date_refuses_the_sheet_and_says_to_quote_it(
    catalog: Catalog,
) -> None:
    with pytest.raises(MalformedSheet, match=r"'note:': 2024-99-01 .*`note: \"2024-99-01\"`"):
        sheet(catalog, "prices: {h100: {price: 2, note: 2024-99-01}}\n")


def test_a_rate_of_thousands_of_digits_refuses_the_sheet_naming_the_card(
    catalog: Catalog,
) -> None:
    with pytest.raises(MalformedSheet, match=r"^line 1, 'a100:': 9+… cannot be read: "
                       "a number of over 4,300 digits"):
        sheet(catalog, "prices: {h100: 2.10, a100: " + "9" * 5000 + "}\n")


@pytest.mark.parametrize(
    "text",
    [
        "prices: {h100: !!float 'abc'}",
        "prices: {h100: !!int 'abc'}",
        "prices: {h100: !!bool maybe}",
        "prices: {h100: {price: [1, 2024-13-45]}}",
        "name: 0x" + "f" * 5000 + "\nprices: {h100: 2}",
        "prices:\n  2024-13-45: 2\n",
        "2024-13-45\n",
        "- 2024-13-45\n",
    ],
    ids=["float-tag", "int-tag", "bool-tag", "nested", "hex-digits", "key", "document", "list"],
)
def test_any_value_yaml_cannot_build_refuses_the_sheet_as_malformed(
    catalog: Catalog, text: str
) -> None:
    with pytest.raises(MalformedSheet, match=r"^line \d+.* cannot be read"):
        sheet(catalog, text)


# -- a rate is a plain number ------------------------------------------------------------


def test_a_base_60_rate_is_refused_not_read_as_ninety_dollars(catalog: Catalog) -> None:
    parsed = sheet(catalog, "prices: {h100: 1:30, l40s: 0.95}")

    assert "h100-sxm" not in parsed.prices and "h100-sxm" not in parsed.raw_prices
    assert parsed.unreadable["h100-sxm"] == "1:30"
    assert parsed.problems == (
        "h100 (h100-sxm): 1:30 refused, not a plain number (YAML 1.1 reads it as 90); "
        "a rate must be between $0.01 and $100 per GPU-hour, in dollars, e.g. `h100: 2.49`",
    )
    assert parsed.prices["l40s"].price == 0.95


@pytest.mark.parametrize("written", ["010", "0x2", "1_5", "0b10", "{price: 1:30}"])
def test_a_rate_in_another_yaml_spelling_of_a_number_is_refused(
    catalog: Catalog, written: str
) -> None:
    parsed = sheet(catalog, f"prices: {{h100: {written}}}")

    assert parsed.prices == {} and "not a plain number" in parsed.problems[0]


def test_a_refused_spelling_keeps_the_sheets_previous_rate(catalog: Catalog) -> None:
    before = build_snapshot(taken_at=T0, clouds=[], teams=[
        TeamFetch(WORKSPACE, "sheet.yaml", sheet(catalog, "prices: {h100: 2.10}"))])
    after = build_snapshot(taken_at=T0, clouds=[], previous=before, teams=[
        TeamFetch(WORKSPACE, "sheet.yaml", sheet(catalog, "prices: {h100: 0x2}"))])

    assert after.team_sheets[WORKSPACE].prices["h100-sxm"].price == 2.10


@pytest.mark.parametrize("written,price", [("2.49", 2.49), ("12", 12.0), ("02.5", 2.5),
                                           ("2.5e+1", 25.0), (".5", 0.5)])
def test_a_plain_decimal_rate_is_read(catalog: Catalog, written: str, price: float) -> None:
    assert sheet(catalog, f"prices: {{h100: {written}}}").prices["h100-sxm"].price == price


# -- name and note are one plain line ----------------------------------------------------


def test_a_sheet_name_with_a_newline_is_read_as_one_line(catalog: Catalog) -> None:
    parsed = sheet(catalog, 'name: "Acme\\nFAKE LINE\\r\\u2028x"\nprices: {h100: 2}')

    assert parsed.name == "Acme FAKE LINE x"


def test_a_note_loses_control_and_format_characters(catalog: Catalog) -> None:
    note = "\\u202eevil\\u200b\\u0007 \\x1b[31mred\\u2029end"
    parsed = sheet(catalog, f'prices: {{h100: {{price: 2, note: "{note}"}}}}')

    assert parsed.prices["h100-sxm"].note == "evil [31mred end"


def test_a_markdown_link_in_a_name_or_note_shows_its_address(catalog: Catalog) -> None:
    parsed = sheet(catalog, 'name: "[login](https://evil.example/x)"\n'
                            'prices: {h100: {price: 2, note: "[renew](<https://e.example>)"}}')

    assert parsed.name == "[login] (https://evil.example/x)"
    assert parsed.prices["h100-sxm"].note == "[renew] (<https://e.example>)"


def test_a_team_name_cannot_add_a_line_or_a_link_to_an_estimates_price_line(
    catalog: Catalog,
) -> None:
    parsed = sheet(catalog, 'name: "Acme [login to see rates](https://evil.example/x)\\n'
                            'FAKE LINE"\nprices:\n  h100: {price: 2.1, note: "[renew]'
                            '(https://evil.example/y) \\u202eok"}\n')
    snap = build_snapshot(taken_at=T0, clouds=[],
                          teams=[TeamFetch(WORKSPACE, "sheet.yaml", parsed)])
    priced = priced_catalog(catalog, snap, workspace=WORKSPACE)

    line = build_report(estimate(parse_query("8b lora 50M tokens h100", priced), priced),
                        now=T0).price_line

    assert line is not None and "team rate, Acme" in line and "FAKE LINE" in line
    assert "](" not in line and unseen(line) == []


def test_a_stored_sheets_name_and_note_are_made_one_line_on_load() -> None:
    stored = TeamSheet.model_validate_json(
        '{"workspace": "*", "location": "s.yaml", "as_of": "2026-12-01T06:00:00Z",'
        ' "name": "Acme\\n[x](https://e.example)",'
        ' "prices": {"h100-sxm": {"price": 2.0, "note": "a\\u202eb"}}}'
    )

    assert stored.name == "Acme [x] (https://e.example)"
    assert stored.prices["h100-sxm"].note == "ab"
