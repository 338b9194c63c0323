"""The ``fedbound`` command: convergence theory of federated and semi-decentralized optimization as
executable, verified objects (bounds, audits, runs against theory, the SD-GT controller, PEP).

Each subcommand lives in its own module of :mod:`fedbound.cli` (see :data:`COMMANDS`) and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (a callable taking the parsed
namespace and returning an exit code).

The contract of every command (issue 8): exit 0 on success; 2 on bad input, with one line on
stderr and no traceback (any :class:`~fedbound.errors.FedboundError`, argparse usage errors, a
non-finite float option, memory exhaustion); 130 on Ctrl-C, with one line; 141, silently, when the
reader of stdout closes the pipe (``| head``); 1 only for an internal
error, with one line asking for a bug report (the traceback with ``FEDBOUND_DEBUG=1``); 3
(:data:`fedbound.cli.commands.EXIT_VIOLATED`) when ``verify`` finds a check violated. Every command with ``--out`` gets ``--overwrite``: an
existing non-empty output folder is refused without it, before any work
(:class:`fedbound.outputs.OutputFolder`), and the folder is marked complete only when the command
succeeds.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import io
import math
import os
import shutil
import sys
import traceback
import warnings

from fedbound import cache
from fedbound.deprecation import FedboundDeprecationWarning
from fedbound.errors import FedboundError
from fedbound.outputs import OutputFolder
from fedbound.validate import listing, suggest
from fedbound.cli.commands import COMMANDS, SUMMARIES

#: environment variable that makes an internal error print its traceback
DEBUG_ENV = "FEDBOUND_DEBUG"
BUG_REPORT = "this is a bug in fedbound; please report it with the command line"

class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse hook
        self.exit(2, f"fedbound: error: {_one_line(message)}\n")

    def _check_value(self, action, value):  # an unknown choice: the closest ones, a short list
        if action.choices is not None and value not in action.choices:
            choices = [str(c) for c in action.choices]
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{suggest(value, choices)} "
                                                 f"(choose from {listing(choices)})")

    def parse_args(self, args=None, namespace=None):  # unknown flags: the closest ones
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            flags = _flags_of(self, namespace)
            hints = [suggest(token.split("=", 1)[0], flags) for token in extras
                     if token.startswith("--")]
            self.error(f"unrecognized arguments: {' '.join(extras)}"
                       + "".join(dict.fromkeys(h for h in hints if h)) + _constants_hint(extras, flags))
        return namespace

    def _get_value(self, action, arg_string):  # every float option must be finite
        value = super()._get_value(action, arg_string)
        if action.type is float and not math.isfinite(value):
            name = "/".join(action.option_strings) or action.dest
            raise argparse.ArgumentError(action, f"must be a finite number, got {arg_string!r}"
                                         if name else arg_string)
        return value


def _flags_of(parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> list[str]:
    """The visible flags of ``parser`` and of the subcommands ``namespace`` chose (``run``,
    ``pep fedavg``, ``control plan``), for the did-you-mean of an unrecognized flag."""
    out = []
    while parser is not None:
        chosen = None
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(namespace, action.dest, None))
            elif action.help is not argparse.SUPPRESS:
                out += [f for f in action.option_strings if f.startswith("--")]
        parser = chosen
    return out


def _constants_hint(extras: list[str], flags: list[str]) -> str:
    """Where the command takes constants as ``--set NAME=VALUE``: the unrecognized arguments that
    read as constants (``L=1``, ``--L 1``, ``--L=1``; not a mistyped flag, which gets its
    did-you-mean) written as ``--set`` takes them; else ""."""
    if "--set" not in flags:
        return ""
    pairs, i = [], 0
    while i < len(extras):
        token = extras[i]
        name = token[2:].split("=", 1)[0] if token.startswith("--") else None
        if name is not None and suggest(f"--{name}", flags):
            i += 1                                            # a flag mistyped, not a constant
        elif name is not None and "=" in token:
            pairs.append(token[2:])
            i += 1
        elif name and i + 1 < len(extras) and not extras[i + 1].startswith("--"):
            pairs.append(f"{name}={extras[i + 1]}")
            i += 2
        else:
            pairs += [token] if "=" in token and not token.startswith("-") else []
            i += 1
    return f"; constants go after --set: --set {' '.join(pairs)}" if pairs else ""


def _command_and_rest(argv: list[str]) -> list[str]:
    """``argv`` from the command word on (the global ``--plugin X`` options stripped)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] == "--plugin" else 1
    return argv[i:]


def _one_line(text) -> str:
    return " ".join(str(text).split())


def _parsers(parser: argparse.ArgumentParser):
    """``parser`` and all its subcommand parsers, recursively."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _parsers(sub)


def _add_overwrite(parser: argparse.ArgumentParser) -> None:
    """``--overwrite`` for every command that writes an ``--out`` folder."""
    for p in _parsers(parser):
        if "--out" in p._option_string_actions and "--overwrite" not in p._option_string_actions:
            p.add_argument("--overwrite", action="store_true",
                           help="write into an existing non-empty --out folder, replacing its files")


def _plugins(argv: list[str]) -> list[str]:
    """The ``--plugin X`` / ``--plugin=X`` values before the command word."""
    out, i = [], 0
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "--plugin" and i + 1 < len(argv):
            out.append(argv[i + 1])
            i += 2
            continue
        if argv[i].startswith("--plugin="):
            out.append(argv[i].split("=", 1)[1])
        i += 1
    return out


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` naming a command, only that command's module is imported. The
    plugins named by ``--plugin`` are loaded first, so that their entries are choices of the
    commands like the built-ins."""
    from fedbound.registry import request_plugin

    argv = list(argv or [])
    for spec in _plugins(argv):
        request_plugin(spec)
    parser = _Parser(prog="fedbound", description=__doc__.split("\n\n")[0].replace("``", "").replace("\n", " "))
    parser.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="load a plugin first: a module on sys.path or a .py file that "
                             "registers algorithms, results, papers, PEP methods or tasks "
                             "(repeatable; installed plugins of the entry-point group "
                             "fedbound.plugins and $FEDBOUND_PLUGINS load themselves)")
    from fedbound import __version__

    parser.add_argument("--version", action="version", version=f"fedbound {__version__}",
                        help="print fedbound's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    first = next((a for a in _command_and_rest(argv) if not a.startswith("-")), None)
    if first is None and {"-h", "--help", "--version"} & set(argv):   # the summaries
        for name, summary in SUMMARIES.items():                # only, no command module imported
            sub.add_parser(name, help=summary)
        return parser
    modules = [COMMANDS[first]] if first in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    rest = _command_and_rest(argv) if first in COMMANDS else None
    for name in modules:
        register = importlib.import_module(name).register
        if rest is not None and "argv" in inspect.signature(register).parameters:
            register(sub, argv=rest)   # a command that builds its flags from the entry it names
        else:
            register(sub)
    _add_overwrite(parser)
    return parser


def _one_line_warnings() -> None:
    """Deprecation warnings as one line on stderr: ``fedbound: warning: --gamma is deprecated;
    use --lr``."""
    shown = warnings.showwarning
    if getattr(shown, "one_line", False):
        return

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, FedboundDeprecationWarning):
            print(f"fedbound: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)
    show.one_line = True
    warnings.showwarning = show


def _help_key(argv: list[str]) -> str | None:
    """The cache key of the help that ``argv`` prints (a command's ``--help``, which builds that
    command's parser from the registries: torch, cvxpy, PEPit are imported for it), or None when
    ``argv`` asks for no help, for ``fedbound --help`` (fast without a cache) or when a plugin's
    source cannot be found (the key holds each plugin's :func:`fedbound.registry.plugin_fingerprint`:
    an edited plugin prints its help afresh)."""
    from fedbound.registry import plugin_fingerprint, plugin_requests

    rest = _command_and_rest(argv)
    if not rest or rest[0] not in COMMANDS or not {"-h", "--help"} & set(rest):
        return None
    plugins = [f"{spec}={plugin_fingerprint(spec)}" for spec, _ in plugin_requests()]
    plugins += [f"{spec}={plugin_fingerprint(spec)}" for spec in _plugins(argv)]
    if any(p.endswith("=None") for p in plugins):
        return None
    return cache.key_of(*argv, str(shutil.get_terminal_size().columns), *plugins)


def _parse(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed; a command's ``--help`` is printed from the cache (:mod:`fedbound.cache`)
    when this source printed it before, and stored when it is printed."""
    key = _help_key(argv)
    if key is None:
        return build_parser(argv).parse_args(argv)
    text = cache.read_text("help", key)
    if text is None:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                return build_parser(argv).parse_args(argv)
        except SystemExit as exc:
            if exc.code == 0:
                cache.store_text("help", key, printed.getvalue())
            raise
        finally:
            sys.stdout.write(printed.getvalue())
    sys.stdout.write(text)
    raise SystemExit(0)


def main(argv: list[str] | None = None) -> int:
    """Run the command of ``argv`` (default ``sys.argv[1:]``) and return its exit status (module
    doc); never raises except SystemExit from ``--help`` and usage errors (status 0 and 2)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    _one_line_warnings()
    debug = os.environ.get(DEBUG_ENV, "") not in ("", "0")
    try:
        args = _parse(argv)
        folder = None
        if getattr(args, "out", None) is not None:
            folder = OutputFolder(args.out, overwrite=getattr(args, "overwrite", False),
                                  resume=getattr(args, "resume", False),
                                  command=" ".join(["fedbound", *argv])).check()
            args.output_folder = folder
        code = int(args.func(args) or 0)
        if code == 0 and folder is not None:
            folder.complete()
        return code
    except FedboundError as exc:
        if debug:
            traceback.print_exc()
        print(f"fedbound: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("fedbound: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of stdout left (`fedbound list --json | head`): stop quietly, as a shell tool
        # killed by SIGPIPE would; stdout goes to /dev/null so that the final flush cannot fail
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except MemoryError:
        print("fedbound: error: out of memory; use a smaller problem or lower "
              "FEDBOUND_MEMORY_BUDGET so that it is refused up front", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into exit status 1
        if debug:
            traceback.print_exc()
        print(f"fedbound: internal error: {type(exc).__name__}: {_one_line(exc)[:300]}; "
              f"{BUG_REPORT} (set {DEBUG_ENV}=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
