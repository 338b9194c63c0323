"""The ``fedbound`` command.

Each subcommand lives in its own module of :mod:`fedbound.cli` (see :data:`COMMANDS`) and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (a callable taking the parsed
namespace and returning an exit code). Any :class:`~fedbound.errors.FedboundError` is printed as
one line on stderr and the command exits with status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from fedbound.errors import FedboundError

#: subcommand -> the module that registers it, in the order of ``fedbound --help``. Only the
#: module of the requested command is imported (torch, cvxpy and sympy are slow to import).
COMMANDS = {
    "demo": "fedbound.cli.demo_cmd",
    "network": "fedbound.cli.network_cmd",
    "list": "fedbound.cli.theory_cmd",
    "bound": "fedbound.cli.theory_cmd",
    "stepsize": "fedbound.cli.theory_cmd",
    "rounds": "fedbound.cli.theory_cmd",
    "audit": "fedbound.cli.audit_cmd",
    "run": "fedbound.cli.run_cmd",
    "verify": "fedbound.cli.verify_cmd",
    "control": "fedbound.cli.control_cmd",
}


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse hook
        self.exit(2, f"fedbound: error: {message}\n")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` naming a command, only that command's module is imported."""
    parser = _Parser(prog="fedbound", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    first = next((a for a in argv or [] if not a.startswith("-")), None)
    modules = [COMMANDS[first]] if first in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = build_parser(argv).parse_args(argv)
        return int(args.func(args) or 0)
    except FedboundError as exc:
        print(f"fedbound: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
