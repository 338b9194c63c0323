"""The ``fedbound`` command.

Each subcommand lives in its own module of :mod:`fedbound.cli` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (a callable taking the parsed
namespace and returning an exit code). Any :class:`~fedbound.errors.FedboundError` is printed as
one line on stderr and the command exits with status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from fedbound.errors import FedboundError

#: subcommand modules, in the order they appear in ``fedbound --help``
COMMAND_MODULES = [
    "fedbound.cli.demo_cmd",
    "fedbound.cli.network_cmd",
    "fedbound.cli.theory_cmd",
    "fedbound.cli.audit_cmd",
    "fedbound.cli.run_cmd",
    "fedbound.cli.verify_cmd",
    "fedbound.cli.control_cmd",
]


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse hook
        self.exit(2, f"fedbound: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fedbound", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a subcommand not written yet
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except FedboundError as exc:
        print(f"fedbound: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
