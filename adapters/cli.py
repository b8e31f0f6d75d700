"""The terminal front end: ``ftcost QUERY...``, ``ftcost --json``, ``ftcost chat``.

Exit status: 0 on success, 2 on a bad query or usage (the message goes to
stderr, never a traceback), 1 when a Hugging Face Hub model could not be fetched
(timeout, Hub unreachable). This module imports neither Slack nor Discord code,
so the command starts fast; aiohttp is imported only when a query names a Hub model.

A model word the catalog does not know but shaped ``org/name[@revision]`` is read
from the Hugging Face Hub (``HF_ENDPOINT``, ``HF_TOKEN``; ``FTCOST_HUB_TIMEOUT``
seconds per request, default 10) and the query parsed again with it. No cache
between runs: in ``ftcost chat`` a Hub model, once read, stays in the session's
catalog, so follow-ups make no request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from adapters.help import EXAMPLES, QUERY_HELP
from adapters.listings import gpu_listing, model_listing
from adapters.parse import QueryError, apply_followup, parse_query
from adapters.report import build_report, hub_warnings
from adapters.terminal import ChartPathError, render_text, save_chart, split_chart_option
from catalog.hub import HubError, HubErrorKind, HubRef, hub_ref_for_word
from catalog.loader import CatalogError, default_catalog
from engine import Request, estimate
from engine.specs import Catalog, ModelSpec

USAGE = """\
usage: ftcost [--json] QUERY...      estimate a fine-tune, e.g. ftcost 70b qlora 50M tokens h100
       ftcost QUERY... --chart F.png  also draw the memory chart into F.png
       ftcost chat                   interactive: each line after the first is a follow-up
       ftcost models | gpus          list the catalog
       ftcost --help                 this text and the query language
"""


MAX_HUB_MODELS = 3
"""Hub models one query may name (each is one round of parse, fetch, parse again)."""
HUB_TIMEOUT_ENV = "FTCOST_HUB_TIMEOUT"
_TRANSIENT = frozenset({HubErrorKind.TIMEOUT, HubErrorKind.UNAVAILABLE})


def resolve_hub_model(ref: HubRef) -> ModelSpec:
    """Read ``ref`` from the Hub (HubError if it cannot be). Imports aiohttp on first use."""
    from catalog.hub.resolver import HubResolver
    from catalog.hub.settings import HubSettings

    settings = HubSettings()
    timeout = os.environ.get(HUB_TIMEOUT_ENV, "").strip()
    if timeout:
        with contextlib.suppress(ValueError):  # a bad value keeps the default
            settings = HubSettings(timeout_s=float(timeout))
    return asyncio.run(HubResolver(settings).resolve(ref))


def parse_with_hub(
    text: str,
    previous: Request | None,
    catalog: Catalog,
    resolve: Callable[[HubRef], ModelSpec] = resolve_hub_model,
) -> tuple[Request, Catalog]:
    """Parse ``text`` (a follow-up of ``previous`` when given) against ``catalog``; a word
    the parser does not know that names a Hub model is resolved, and the parse retried
    on the catalog extended with it. Returns the request and the catalog it needs.
    Raises QueryError or HubError."""
    resolved = 0
    while True:
        try:
            if previous is None:
                return parse_query(text, catalog), catalog
            return apply_followup(previous, text, catalog), catalog
        except QueryError as exc:
            ref = hub_ref_for_word(exc.word, catalog) if resolved < MAX_HUB_MODELS else None
            if ref is None:
                raise
            catalog = catalog.with_models([resolve(ref)])
            resolved += 1


def _estimate_text(request: Request, as_json: bool, catalog: Catalog | None = None) -> str:
    est = estimate(request, catalog)
    if as_json:
        doc = est.to_json()
        doc["warnings"] = [*hub_warnings(est.model), *doc["warnings"]]
        return json.dumps(doc, indent=2)
    return render_text(build_report(est))


def run_query(
    words: list[str], as_json: bool, out: TextIO, err: TextIO, chart: Path | None = None
) -> int:
    if chart is None and any(w.lower().strip("?!.,") == "chart" for w in words):
        print(
            'ftcost: "chart" posts a PNG in Slack and Discord; in the terminal, write it to '
            "a file: ftcost 70b qlora 50M tokens --chart chart.png",
            file=err,
        )
        return 2
    words = [w for w in words if w.lower().strip("?!.,") != "chart"]
    try:
        request, catalog = parse_with_hub(" ".join(words), None, default_catalog())
    except QueryError as exc:
        print(f"ftcost: {exc}", file=err)
        return 2
    except HubError as exc:
        print(f"ftcost: {exc}", file=err)
        return 1 if exc.kind in _TRANSIENT else 2
    print(_estimate_text(request, as_json, catalog), file=out)
    if chart is not None:
        try:
            print(save_chart(request, catalog, chart), file=err if as_json else out)
        except ChartPathError as exc:
            print(f"ftcost: {exc}", file=err)
            return 2
    return 0


def chat(
    lines: Iterable[str], out: TextIO, err: TextIO, prompt: Callable[[str], None] | None = None
) -> int:
    """Read queries line by line; after the first estimate each line is a follow-up."""
    last: Request | None = None
    catalog = default_catalog()
    ask = prompt or (lambda text: None)
    ask("ftcost> ")
    for raw in lines:
        line = raw.strip()
        if line in ("quit", "exit", ":q"):
            break
        if not line:
            ask("ftcost> ")
            continue
        try:
            if line in ("new", "reset"):
                last = None
                print("Starting over: type a full query.", file=out)
            elif last is None or line.startswith("new "):
                last, catalog = parse_with_hub(line.removeprefix("new "), None, catalog)
                print(_estimate_text(last, False, catalog), file=out)
            else:
                last, catalog = parse_with_hub(line, last, catalog)
                print(_estimate_text(last, False, catalog), file=out)
        except (QueryError, HubError) as exc:
            print(f"ftcost: {exc}", file=err)
        ask("ftcost> ")
    return 0


def main(
    argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        if not args or args[0] in ("-h", "--help", "help"):
            print(USAGE + "\n" + QUERY_HELP, file=out)
            return 0 if args else 2
        if args == ["models"]:
            print(model_listing(default_catalog()), file=out)
            return 0
        if args == ["gpus"]:
            print(gpu_listing(default_catalog()), file=out)
            return 0
        if args == ["chat"]:
            interactive = sys.stdin.isatty()

            def prompt(text: str) -> None:
                if interactive:
                    print(text, end="", file=out, flush=True)

            if interactive:
                print("ftcost chat: a full query first, then follow-ups such as "
                      f"'{EXAMPLES[-1] if EXAMPLES else 'what if 8k seq'}'. "
                      "'new' starts over, 'quit' leaves.", file=out)
            return chat(sys.stdin, out, err, prompt)
        as_json = False
        if "--json" in args:
            as_json = True
            args = [a for a in args if a != "--json"]
        try:
            args, chart = split_chart_option(args)
        except ChartPathError as exc:
            print(f"ftcost: {exc}", file=err)
            return 2
        unknown = [a for a in args if a.startswith("--")]
        if unknown:
            print(f"ftcost: unknown option {unknown[0]}\n{USAGE}", file=err)
            return 2
        return run_query(args, as_json, out, err, chart)
    except CatalogError as exc:
        print(f"ftcost: the catalog is broken: {exc}", file=err)
        return 2
    except (KeyboardInterrupt, BrokenPipeError):
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
