"""``fedbound new plugin DIR --name NAME``: write a pip-installable plugin (an algorithm, a theorem
and its paper, a PEP method, tests and the entry point; :mod:`fedbound.extend.template`), ready for
``pip install -e DIR``, after which every command reaches NAME without a flag."""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES


def new_plugin_command(args) -> int:
    from fedbound.extend.template import new_plugin

    written = new_plugin(args.dir, args.name, overwrite=args.overwrite)
    for path in written:
        print(path)
    print(f"wrote the plugin {args.name} to {args.dir}; install it with: pip install -e {args.dir}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser("new", help=SUMMARIES["new"],
                                   description=__doc__.split("\n\n")[0].replace("``", ""))
    kinds = parser.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    plugin = kinds.add_parser("plugin", help="a plugin: algorithm, theorem, paper, PEP method, tests",
                              description=__doc__.split("\n\n")[0].replace("``", ""))
    plugin.add_argument("dir", metavar="DIR", help="the folder to write (created; must be empty "
                                                   "unless --overwrite)")
    plugin.add_argument("--name", required=True, help="the plugin's name: the algorithm's, the "
                                                      "paper's and the entry point's (lowercase "
                                                      "letters, digits, underscores)")
    plugin.add_argument("--overwrite", action="store_true", help="write into a non-empty DIR")
    plugin.set_defaults(func=new_plugin_command)
