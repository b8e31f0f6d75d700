"""The ftcost query language's public entry points (kept at this path for importers).

The language itself lives in :mod:`adapters.query`: the grammar is in that package's
docstring and docs/query.md.
"""

from __future__ import annotations

from adapters.query import (
    EXAMPLE,
    MAX_QUERY_CHARS,
    NOTHING_SAID,
    QueryError,
    Said,
    apply_followup,
    parse_fields,
    parse_query,
    seed_largest_model,
)

__all__ = ["EXAMPLE", "MAX_QUERY_CHARS", "NOTHING_SAID", "QueryError", "Said",
           "apply_followup", "parse_fields", "parse_query", "seed_largest_model"]
