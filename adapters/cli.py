"""The terminal front end: ``ftcost QUERY...``, ``ftcost --json``, ``ftcost chat``.

Like the Slack and Discord apps it is thin: it hands the words to the shared
:class:`bot.service.Service` and renders the :class:`~bot.replies.Reply` (text that fits
the terminal, :mod:`adapters.terminal`, or the engine's JSON). The service answers
``help``, ``models``, ``gpus`` and ``chart`` (:mod:`bot.words`) and reads a model word
shaped ``org/name[@revision]`` from the Hugging Face Hub (``HF_ENDPOINT``, ``HF_TOKEN``,
``HF_HUB_OFFLINE``; ``FTCOST_HUB_TIMEOUT`` seconds per request, default 10). In ``ftcost
chat`` a Hub model, once read, stays in the session's memory, so follow-ups make no
request.

Exit status: 0 on success, 2 on a bad query or usage (the message goes to stderr, never
a traceback), 1 when the Hub could not answer now (timeout, unreachable: try again) or
the output could not be written (a full disk, a closed stdout, an encoding without the
answer's characters), 130 on Ctrl-C or a broken pipe.
This module imports neither Slack nor Discord code, so the command starts fast; the
HTTP client is imported only when a query names a Hub model. docs/cli.md has the rest.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from adapters.argv import MissingValue, take_option
from adapters.help import EXAMPLES
from adapters.report import hub_warnings
from adapters.terminal import (
    CHART_OPTION,
    ChartPathError,
    OutputError,
    check_chart_path,
    printable_stream,
    render_text,
    save_chart,
    split_chart_option,
    stream_failed,
    terminal_width,
)
from bot.channel_settings import SETTINGS, defaults_from, read_value
from bot.replies import Reply, ReplyKind
from bot.service import Service
from bot.words import CHART_WORD, HELP_WORDS, is_command_word, normalized
from catalog.echo import shown
from catalog.hub import needs_hub
from catalog.hub.settings import HubSettings, HubSettingsError
from catalog.loader import CatalogError
from engine import Request

if TYPE_CHECKING:
    from adapters.trainconfig import ConfigRead

USAGE: Final = """\
usage: ftcost [--json] QUERY...      estimate a fine-tune, e.g. ftcost 70b qlora 50M tokens h100
       ftcost QUERY... --chart F.png  also draw the memory chart into F.png
       ftcost --config FILE [WORDS]  estimate a training config (axolotl, TRL, torchtune,
                                     LLaMA-Factory); the words override it
       ftcost --framework NAME QUERY  the framework when the query names none (hf, trl,
                                     unsloth, torchtune, litgpt, torchtitan, generic;
                                     default: $FTCOST_FRAMEWORK, else generic)
       ftcost chat                   interactive: each line after the first is a follow-up
       ftcost models | gpus          list the catalog
       ftcost --help                 this text and the query language
"""
CHAT_HELP: Final = """\
In ftcost chat: a full query first, then follow-ups that change only what they name
  ('what if 8k seq', 'with full', 'on 4x a100'). Also:
  chart FILE.png   draw the memory chart of the estimate above into FILE.png
  new              start over (or 'new 70b qlora ...')
  models, gpus     list the catalog
  quit             leave (or Ctrl-D)
"""
CHART_IN_THE_TERMINAL: Final = (
    '"chart" posts a PNG in Slack and Discord; in the terminal, write it to a file: '
    "ftcost 70b qlora 50M tokens --chart chart.png"
)
CHART_IN_CHAT: Final = (
    'The chart is a PNG file here: say "chart memory.png" (after an estimate, or with a '
    "query: 70b qlora 50M tokens chart memory.png)."
)
CONFIG_EXTENSIONS: Final = (".yaml", ".yml", ".json", ".toml")
"""A training config file's extensions: ``--config`` with one names a file to read."""
FRAMEWORK_ENV: Final = "FTCOST_FRAMEWORK"
FRAMEWORK_OPTION: Final = "--framework"
QUIT_WORDS: Final = frozenset({"quit", "exit", ":q"})
RESET_WORDS: Final = frozenset({"new", "reset"})
PROMPT: Final = "ftcost> "


def terminal_service() -> Service:
    """The shared :class:`Service` as the terminal uses it: no store, no rate limit, the
    Hub timeout from ``FTCOST_HUB_TIMEOUT`` (``HubSettings.from_environment``: a value
    that is not 0.1-120 seconds raises ``HubSettingsError`` naming the variable)."""
    return Service(hub=HubSettings.from_environment())


class FrameworkError(ValueError):
    """``--framework`` or ``FTCOST_FRAMEWORK`` names no framework: ``shown`` is the value
    (cut short), ``names`` the frameworks to say instead, ``names_aside`` the other names
    read as one of them."""

    def __init__(self, message: str, shown: str = "", names: str = "", aside: str = "") -> None:
        super().__init__(message)
        self.shown, self.names, self.names_aside = shown, names, aside


FRAMEWORK_ALIASES: Final = "trl, peft, axolotl, llama-factory, transformers, accelerate for hf"


def framework_defaults(value: str | None) -> dict[str, object]:
    """The request defaults ``--framework NAME`` (or ``FTCOST_FRAMEWORK``) sets, read the
    way a channel's ``set framework NAME`` is (``trl`` is ``hf``); {} for none."""
    if value is None or not value.strip():
        return {}
    setting = SETTINGS["framework"]
    name = read_value(setting, value)
    if name is None:
        shown = value if len(value) <= 40 else value[:39] + "…"
        names = ", ".join(setting.values)
        raise FrameworkError(
            f'"{shown}" is not a framework: say one of {names} (or {FRAMEWORK_ALIASES})',
            shown, names, FRAMEWORK_ALIASES,
        )
    return defaults_from({"framework": name})


def split_framework_option(args: list[str]) -> tuple[list[str], str | None]:
    """``args`` without ``--framework NAME`` / ``--framework=NAME``, and NAME (the last
    one given)."""
    try:
        rest, values = take_option(args, FRAMEWORK_OPTION)
    except MissingValue:
        raise FrameworkError("--framework needs a name, e.g. --framework hf") from None
    if len(set(values)) > 1:
        named = ", ".join(f'"{shown(v, 40)}"' for v in values)
        raise FrameworkError(f"--framework was given {len(values)} times ({named}); give it once.")
    return rest, values[-1] if values else None


def ask(
    service: Service,
    text: str,
    previous: Request | None = None,
    defaults: dict[str, object] | None = None,
) -> Reply:
    """The service's answer to ``text`` (a follow-up of ``previous`` when given), with
    any Hub model resolved first; ``defaults`` fill fields the words leave unsaid. Without
    a Hub model it is answered in this thread (:meth:`Service.answer_offline`): asyncio,
    imported only for the Hub, is a sixth of the command's start-up."""
    reply = service.answer_offline(text, previous, defaults)
    if reply is not None:
        return reply
    import asyncio

    return asyncio.run(service.answer_async(text, previous, defaults=defaults))


def draw_chart(service: Service, request: Request, path: Path) -> str:
    """Write the memory chart of ``request`` to ``path``; the line saying where."""
    if needs_hub(request.model, service.catalog) is None:
        return save_chart(request, service.catalog_for(), path)
    import asyncio  # a Hub model's chart: its architecture from the Hub (usually cached)

    return save_chart(request, asyncio.run(service.catalog_with(request)), path)


def estimate_json(reply: Reply) -> str:
    """The engine's JSON document of an estimate reply, Hub provenance in its warnings."""
    assert reply.estimate is not None
    doc = reply.estimate.to_json()
    doc["warnings"] = [*hub_warnings(reply.estimate.model), *doc["warnings"]]
    return json.dumps(doc, indent=2)


def report_text(reply: Reply, out: TextIO) -> str:
    """An estimate reply's report as text that fits the terminal ``out`` writes to."""
    assert reply.report is not None
    return render_text(reply.report, terminal_width(out))


def error_status(reply: Reply) -> int:
    """1 when asking again later may work (the Hub timed out), else 2."""
    return 1 if reply.retry else 2


def catalog_json(service: Service, reply: Reply) -> str:
    """``--json models`` / ``--json gpus``: the catalog entries as JSON (the cards with the
    prices the listing shows); any other reply without an estimate (``help``) as
    ``{"kind": ..., "text": ...}``, so stdout stays one JSON document."""
    if reply.kind is ReplyKind.MODELS:
        entries = [m.model_dump(mode="json") for m in service.catalog.models.values()]
    elif reply.kind is ReplyKind.GPUS:
        priced = service.catalog_for(None)
        entries = [g.model_dump(mode="json") for g in priced.gpus.values()]
    else:
        return json.dumps({"kind": reply.kind.value, "text": reply.text}, indent=2)
    return json.dumps(entries, indent=2)


def run_query(
    words: list[str], as_json: bool, out: TextIO, err: TextIO, chart: Path | None = None,
    service: Service | None = None, config: ConfigRead | None = None,
    defaults: dict[str, object] | None = None,
) -> int:
    """``ftcost QUERY...``: print the answer; the exit status. With ``config`` (``--config
    FILE``) the words are read on top of the training config; ``defaults`` (from
    ``--framework``) fill what the words leave unsaid."""
    service = service or terminal_service()
    if config is not None:
        import asyncio  # a config may name a Hub model

        from bot.config_questions import answer_config  # only --config reads configs

        reply = asyncio.run(answer_config(service, config, " ".join(words)))
    else:
        reply = ask(service, " ".join(words), defaults=defaults)
    if chart is None and (reply.chart or reply.word == CHART_WORD):
        print(f"ftcost: {CHART_IN_THE_TERMINAL}", file=err)
        return 2
    if reply.kind is ReplyKind.ERROR:
        print(f"ftcost: {reply.text}", file=err)
        return error_status(reply)
    if reply.kind is not ReplyKind.ESTIMATE or reply.request is None:
        if chart is not None:  # `models --chart m.png`: nothing to draw
            print(f"ftcost: {CHART_OPTION} draws an estimate's memory; a listing has none. "
                  f"Ask a question with it: ftcost 70b qlora h100 {CHART_OPTION} memory.png",
                  file=err)
            return 2
        print(catalog_json(service, reply) if as_json else reply.text, file=out)
        return 0
    text = estimate_json(reply) if as_json else report_text(reply, out)
    if as_json and config is not None:
        from adapters.trainconfig.ask import config_json

        text = json.dumps(config_json(json.loads(text), config), indent=2)
    print(text, file=out)
    if chart is not None:
        try:
            print(draw_chart(service, reply.request, chart), file=err if as_json else out)
        except ChartPathError as exc:
            print(f"ftcost: {exc}", file=err)
            return 2
    return 0


# ------------------------------------------------------------------------------------------
# ftcost chat


@dataclass
class Chat:
    """One terminal conversation: the service, and the estimate follow-ups change (the
    terminal's "thread")."""

    service: Service
    out: TextIO
    err: TextIO
    previous: Request | None = None

    def line(self, raw: str) -> bool:
        """Answer one line; False when the user leaves."""
        text = " ".join(raw.split())
        low = normalized(text)
        if low in QUIT_WORDS:
            return False
        if not text:
            return True
        if low in RESET_WORDS:
            self.previous = None
            print("Starting over: type a full query.", file=self.out)
            return True
        try:
            text, path = chat_chart_file(text)
        except ChartPathError as exc:
            print(f"ftcost: {exc}", file=self.err)
            return True
        reply = ask(self.service, text, self.previous)
        self.show(reply, path)
        return True

    def show(self, reply: Reply, path: Path | None) -> None:
        if reply.kind is ReplyKind.ERROR:
            message = CHART_IN_CHAT if reply.word == CHART_WORD and path is None else reply.text
            print(f"ftcost: {message}", file=self.err)
            return
        if reply.kind is ReplyKind.HELP:
            print(f"{CHAT_HELP}\n{reply.text}", file=self.out)
            return
        if reply.kind is ReplyKind.ESTIMATE:
            self.previous = reply.request
            print(report_text(reply, self.out), file=self.out)
        elif reply.kind is not ReplyKind.CHART:
            print(reply.text, file=self.out)  # models, gpus
            return
        if reply.request is None or not (reply.chart or reply.kind is ReplyKind.CHART):
            return
        if path is None:
            print(f"ftcost: {CHART_IN_CHAT}", file=self.err)
            return
        try:
            print(draw_chart(self.service, reply.request, path), file=self.out)
        except ChartPathError as exc:
            print(f"ftcost: {exc}", file=self.err)


_FILE_NAME: Final = re.compile(r"[^\s]*[^\W\d_][^\s]*\.[A-Za-z]{2,5}")
"""A word shaped like a file name: a name with letters, a dot and a short all-letter
extension (``memory.jpg``, ``out/x.txt``); no query word is (``1.5b``, ``llama-3.1``)."""


def chat_chart_file(text: str) -> tuple[str, Path | None]:
    """``text`` without the file that follows the word ``chart``, and that file (checked:
    :func:`adapters.terminal.check_chart_path`; a file name not ending in ``.png`` is
    refused as ``--chart`` refuses it); None when there is none."""
    words = text.split()
    for i, word in enumerate(words[:-1]):
        after = words[i + 1]
        if word.lower() == CHART_WORD and (
            after.lower().endswith(".png") or _FILE_NAME.fullmatch(after)
        ):
            path = check_chart_path(after, asked_by=CHART_WORD)
            return " ".join(words[: i + 1] + words[i + 2 :]), path
    return text, None


def chat(
    lines: Iterable[str], out: TextIO, err: TextIO, prompt: Callable[[str], None] | None = None,
    service: Service | None = None,
) -> int:
    """Read queries line by line; after the first estimate each line is a follow-up."""
    session = Chat(service or terminal_service(), out, err)
    show_prompt = prompt or (lambda text: None)
    show_prompt(PROMPT)
    for raw in lines:
        if not session.line(raw):
            break
        show_prompt(PROMPT)
    return 0


def _interactive_chat(out: TextIO, err: TextIO) -> int:
    interactive = sys.stdin.isatty()

    def prompt(text: str) -> None:
        if interactive:
            print(text, end="", file=out, flush=True)

    if interactive:
        print("ftcost chat: a full query first, then follow-ups such as "
              f"'{EXAMPLES[-1] if EXAMPLES else 'what if 8k seq'}'. "
              "'help' lists the words, 'new' starts over, 'quit' leaves.", file=out)
    return chat(sys.stdin, out, err, prompt)


# ------------------------------------------------------------------------------------------


def _read_config_option(args: list[str]) -> tuple[list[str], ConfigRead | None]:
    """``args`` without ``--config FILE``, and the config read from FILE. The config
    reader is imported only when the option is there (a plain query starts faster)."""
    if not any(a == "--config" or a.startswith("--config=") for a in args):
        return args, None
    from adapters.trainconfig.ask import read_config_file, split_config_option

    rest, config_file = split_config_option(args)
    if config_file is not None and _names_a_recipe_config(config_file):
        return args, None  # "tune run ... --config llama3_1/8B_lora": the query reads it
    return rest, read_config_file(config_file) if config_file is not None else None


def _names_a_recipe_config(value: str) -> bool:
    """``--config llama3_1/8B_lora`` in a pasted ``tune run`` line: no file extension,
    shaped as a torchtune config's name (as the query reads one) and no such file, so a
    name the query language reads, not a file to open. A missing ``my.yaml`` or
    ``/tmp/run`` is still a file that could not be read."""
    from adapters.query.recipes import TUNE_CONFIG  # the query's own reading of the name

    # The shape first: a size such as 1.5B (qwen2_5/1.5B_lora) is no file extension.
    if not TUNE_CONFIG.match(value.lower().replace("_", "-")):
        return False
    if os.path.splitext(value)[1].lower() in CONFIG_EXTENSIONS:
        return False
    try:
        os.stat(value)
    except OSError:
        return True  # no such file (or none the file system can name)
    return False


def main(
    argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """``ftcost ...``: the exit status. Output that can't be written (a full disk, a
    closed stdout) is one ``ftcost:`` line on stderr and status 1; when stderr can't be
    written either, the status alone."""
    args = list(sys.argv[1:] if argv is None else argv)
    raw_out = sys.stdout if out is None else out  # None: started with stdout closed
    raw_err = sys.stderr if err is None else err
    # errors and listings repeat outside text too: both go through printable()
    out, err = printable_stream(raw_out), printable_stream(raw_err, quiet=True)
    try:
        status = _main(args, out, err)
        out.flush()  # a full disk shows on the last, buffered write
    except OutputError as exc:
        _discard(raw_out)
        print(f"ftcost: {exc}", file=err)
        status = 1
    except (KeyboardInterrupt, BrokenPipeError):
        _discard(raw_out)
        status = 130
    err.flush()
    if stream_failed(err):
        _discard(raw_err)
    return status


def _discard(stream: TextIO | None) -> None:
    """Point the process's own stdout or stderr at the null device, so the interpreter's
    last flush of what is left in its buffer fails neither loudly nor with status 120."""
    if stream is None or all(stream is not own for own in (sys.__stdout__, sys.__stderr__)):
        return  # a caller's own stream (tests): left as it is
    with contextlib.suppress(OSError, ValueError):
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)


def _main(args: list[str], out: TextIO, err: TextIO) -> int:
    try:
        blank = not " ".join(args).strip()  # `ftcost`, `ftcost ''`: no query at all
        if blank or normalized(" ".join(args)) in HELP_WORDS:
            reply = terminal_service().answer("help")
            print(USAGE + "\n" + reply.text, file=out)
            return 2 if blank else 0
        if args == ["chat"]:
            return _interactive_chat(out, err)
        try:
            args, chart = split_chart_option(args)
        except ChartPathError as exc:
            print(f"ftcost: {exc}", file=err)
            return 2
        try:
            args, config = _read_config_option(args)
        except ValueError as exc:  # adapters.trainconfig.ConfigError
            print(f"ftcost: {exc}", file=err)
            return 2
        given_json = next((a for a in args if a.startswith("--json=")), None)
        if given_json is not None:
            print(f'ftcost: --json takes no value ("{given_json[:40]}"): write --json alone, '
                  "e.g. ftcost --json 70b qlora 50M tokens h100", file=err)
            return 2
        try:
            args, framework = split_framework_option(args)  # before --json: its value
            as_json = "--json" in args
            args = [a for a in args if a != "--json"]
            defaults = _framework_defaults(framework, args)
        except FrameworkError as exc:
            print(f"ftcost: {exc}", file=err)
            return 2
        if problem := _misplaced_words(args):
            print(f"ftcost: {problem}", file=err)
            return 2
        if not " ".join(args).strip() and config is None:
            # `ftcost --json` alone (or only options): as bare `ftcost`, a usage error
            print(USAGE + "\n" + terminal_service().answer("help").text, file=out)
            return 2
        typo = _own_option_typo(args)
        if typo:
            print(f"ftcost: unknown option {typo}\n{USAGE}", file=err)
            return 2
        return run_query(args, as_json, out, err, chart, config=config, defaults=defaults)
    except HubSettingsError as exc:  # FTCOST_HUB_TIMEOUT
        print(f"ftcost: {exc}", file=err)
        return 2
    except CatalogError as exc:
        print(f"ftcost: the catalog is broken: {exc}", file=err)
        return 2


def _misplaced_words(args: list[str]) -> str | None:
    """What is wrong with words that belong elsewhere, or None: ``chat`` left alone once
    options were taken out (the chat takes none), and the chat's ``chart FILE.png`` in a
    one-shot command (where the chart is the ``--chart`` option)."""
    if args == ["chat"]:
        return ("the chat takes no options: run ftcost chat alone, or ask one question "
                "with them (ftcost --json 70b qlora 50M tokens h100).")
    for k, word in enumerate(args[:-1]):
        if word.lower() == CHART_WORD and args[k + 1].lower().endswith(".png"):
            rest = " ".join(args[:k] + args[k + 2:])
            return (f'"chart {shown(args[k + 1], 60)}" is how the chat asks for a chart; in '
                    f"a one-shot command it is an option: ftcost {shown(rest, 300)} "
                    f"{CHART_OPTION} {shown(args[k + 1], 300)}")
    return None


def _framework_defaults(option: str | None, words: list[str]) -> dict[str, object]:
    """The defaults of ``--framework NAME``, else of ``FTCOST_FRAMEWORK`` (not read for a
    listing, ``models`` or ``gpus``, which has no framework); a bad value of the variable
    is refused naming it."""
    if option is not None:
        return framework_defaults(option)
    value = os.environ.get(FRAMEWORK_ENV)
    if value is None or is_command_word(" ".join(words)):
        return {}
    try:
        return framework_defaults(value)
    except FrameworkError as exc:
        raise FrameworkError(
            f"{FRAMEWORK_ENV}={exc.shown} is not a framework: set it to one of "
            f"{exc.names} (or {exc.names_aside}), or unset it."
        ) from None


OWN_OPTIONS: Final = ("--json", "--chart", "--config", "--framework")
"""ftcost's own options; any other ``--word`` is part of the query (training-script
flags such as ``--per_device_train_batch_size 4`` or ``--tensor-parallel-size 8``)."""


_TYPED_DASHES: Final = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
"""Dashes other than ``-`` that an editor's autocorrect makes of ``--`` (``—json``)."""


def _own_option_typo(args: list[str]) -> str | None:
    """The first ``--word`` that looks like a misspelt option of ftcost's own (``--jsn``,
    ``--JSON``, ``—json`` with autocorrect's dash: "unknown option --jsn (did you mean
    --json?)"), or None."""
    for arg in args:
        if not arg.startswith(("--", *_TYPED_DASHES)):
            continue
        name = arg.split("=", 1)[0]
        if name in OWN_OPTIONS:
            continue  # left for the query on purpose (a torchtune line's --config NAME)
        name = "--" + name.lstrip("-" + _TYPED_DASHES).lower()
        if name.startswith(tuple(f"{o}{sep}" for o in OWN_OPTIONS for sep in "_-")):
            continue  # a longer word of a script's own (accelerate's --config_file)
        close = difflib.get_close_matches(name, OWN_OPTIONS, n=1, cutoff=0.7)
        if close:
            return f"{arg} (did you mean {close[0]}?)"
    return None


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
