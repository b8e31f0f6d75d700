"""The terminal front end: ``ftcost QUERY...``, ``ftcost --json``, ``ftcost chat``.

Exit status: 0 on success, 2 on a bad query or usage (the message goes to
stderr, never a traceback). This module imports neither Slack nor Discord code,
so the command starts fast.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import TextIO

from adapters.help import EXAMPLES, QUERY_HELP
from adapters.listings import gpu_listing, model_listing
from adapters.parse import QueryError, apply_followup, parse_query
from adapters.report import build_report
from adapters.terminal import render_text
from catalog.loader import CatalogError, default_catalog
from engine import Request, estimate

USAGE = """\
usage: ftcost [--json] QUERY...      estimate a fine-tune, e.g. ftcost 70b qlora 50M tokens h100
       ftcost chat                   interactive: each line after the first is a follow-up
       ftcost models | gpus          list the catalog
       ftcost --help                 this text and the query language
"""


def _estimate_text(request: Request, as_json: bool) -> str:
    est = estimate(request)
    if as_json:
        return json.dumps(est.to_json(), indent=2)
    return render_text(build_report(est))


def run_query(words: list[str], as_json: bool, out: TextIO, err: TextIO) -> int:
    try:
        request = parse_query(" ".join(words))
    except QueryError as exc:
        print(f"ftcost: {exc}", file=err)
        return 2
    print(_estimate_text(request, as_json), file=out)
    return 0


def chat(
    lines: Iterable[str], out: TextIO, err: TextIO, prompt: Callable[[str], None] | None = None
) -> int:
    """Read queries line by line; after the first estimate each line is a follow-up."""
    last: Request | None = None
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
                last = parse_query(line.removeprefix("new "))
                print(_estimate_text(last, False), file=out)
            else:
                last = apply_followup(last, line)
                print(_estimate_text(last, False), file=out)
        except QueryError as exc:
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
        unknown = [a for a in args if a.startswith("--")]
        if unknown:
            print(f"ftcost: unknown option {unknown[0]}\n{USAGE}", file=err)
            return 2
        return run_query(args, as_json, out, err)
    except CatalogError as exc:
        print(f"ftcost: the catalog is broken: {exc}", file=err)
        return 2
    except (KeyboardInterrupt, BrokenPipeError):
        return 130


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
