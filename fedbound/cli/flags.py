"""Command-line flags from option declarations (:class:`fedbound.registry.Option`): every command
that takes the options of registered entries (algorithms, tasks, networks, PEP methods) adds their
flags here and reads them back here, so that a flag is parsed and checked by the one option of the
entry that takes it, and a deprecated flag warns.

Flags are read as text and parsed by the chosen entry's own option (two entries may read the same
flag differently, e.g. ``--local-steps 1,3,5`` per client for FedNova and one count for AFGA).
Switch options (``parse=bool``) are flags without a value: ``--nesterov`` turns the switch on and
``--no-nesterov`` off (where an entry's default is on, e.g. AFGA's ``--no-eps-inside-sqrt``). A
choice option shows its choices, ``--bias-correction {none,adam,flower}`` (the union over the
entries declaring the flag); the chosen entry's option still checks the value (with a did-you-mean).
"""
from __future__ import annotations

import argparse

from fedbound.deprecation import deprecated
from fedbound.errors import ValidationError
from fedbound.registry import Option, flag_of

#: argparse dest prefix of deprecated flags
_OLD = "old:"
#: prefix of the flag that turns a switch off
_NO = "--no-"


def dest_of(flag: str) -> str:
    return flag[2:].replace("-", "_")


def off_flag(flag: str) -> str:
    """The flag that turns the switch ``flag`` off: ``--nesterov`` -> ``--no-nesterov``."""
    return _NO + flag[2:]


def choices_of(option: Option) -> tuple[str, ...] | None:
    """The names ``option`` accepts when it declares them (:attr:`fedbound.registry.Option.choices`,
    set by :func:`fedbound.registry.choice_option`), else None."""
    if option.choices is None:
        return None
    return tuple(option.choices() if callable(option.choices) else option.choices)


def metavar_of(options: list[Option]) -> str:
    """``{a,b,c}``: the choices of the options declaring one flag (in order, each once) when they
    are all choice options, else the first one's name in capitals."""
    names: dict[str, None] = {}
    for o in options:
        choices = choices_of(o)
        if choices is None:
            return options[0].name.upper()
        names.update(dict.fromkeys(choices))
    return "{" + ",".join(names) + "}"


def flag_table(entries) -> dict[str, tuple[Option, list[str], list[Option]]]:
    """flag -> (the first option declaring it, the entries taking it, every option declaring it),
    in declaration order."""
    out: dict[str, tuple[Option, list[str], list[Option]]] = {}
    for entry in entries:
        for o in entry.options:
            first, users, every = out.setdefault(o.flag, (o, [], []))
            users.append(entry.name)
            every.append(o)
    return out


def add_flags(group, table: dict, *, users: bool = True) -> None:
    """One flag per entry of ``table`` (help: the option's, and the entries taking it when
    ``users``), and hidden flags for the deprecated spellings."""
    old_seen: set[str] = set()
    for flag, (o, names, every) in table.items():
        text = o.help + (f" [{', '.join(names)}]" if users else "")
        if o.parse is bool:
            group.add_argument(flag, dest=dest_of(flag), action="store_const", const=True,
                               default=None, help=text)
            if off_flag(flag) not in table:
                old_seen.add(off_flag(flag))
                group.add_argument(off_flag(flag), dest=dest_of(flag), action="store_const",
                                   const=False, default=None, help=f"turn {flag} off")
        else:
            group.add_argument(flag, dest=dest_of(flag), default=None, metavar=metavar_of(every),
                               help=text)
    for every in (options for _, _, options in table.values()):
        for o, old in ((o, old) for o in every for old in o.old_flags):
            if old in table or old in old_seen:
                continue
            old_seen.add(old)
            if o.parse is bool:
                group.add_argument(old, dest=_OLD + old, action="store_const", const=True,
                                   default=None, help=argparse.SUPPRESS)
            else:
                group.add_argument(old, dest=_OLD + old, default=None, help=argparse.SUPPRESS)


def given(args, entry, table: dict, what: str = "") -> dict:
    """The options of ``entry`` given on the command line, parsed by its own options, by option
    name (deprecated flags warn); a flag of ``table`` that ``entry`` does not take is an error."""
    own = {o.flag: o for o in entry.options}
    olds = {old for _, _, every in table.values() for o in every for old in o.old_flags}
    for old_dest, value in vars(args).items():
        if old_dest.startswith(_OLD) and value is not None and old_dest[len(_OLD):] in olds:
            old = old_dest[len(_OLD):]
            matches = [o for o in entry.options if old in o.old_flags]
            if not matches:
                raise ValidationError(f"{old} does not apply to {what or entry.name}")
            new = matches[0].flag
            if getattr(args, dest_of(new), None) is not None:
                raise ValidationError(f"give {new} or its old spelling {old}, not both")
            deprecated(old, new)
            setattr(args, dest_of(new), value)
    out = {}
    for flag in table:
        value = getattr(args, dest_of(flag), None)
        if value is None:
            continue
        o = own.get(flag)
        if o is None:
            raise ValidationError(f"{flag} does not apply to {what or entry.name}; its options are "
                                  f"{', '.join(sorted(own)) or 'none'}")
        out[o.name] = value if o.parse is bool else parse(o, value)
    return out


class _Spelling(argparse.Action):
    """A flag with an old spelling (:func:`add_renamed`): the old one warns once; giving both is an
    error."""

    def __init__(self, option_strings, dest, *, new: str, old: str, **kwargs):
        super().__init__(option_strings, dest, **kwargs)
        self.new, self.old = new, old

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_spelled", {})
        if given.get(self.dest, option_string) != option_string:
            raise ValidationError(f"give {self.new} or its old spelling {self.old}, not both")
        given[self.dest] = option_string
        if option_string == self.old:
            deprecated(self.old, self.new)
        setattr(namespace, self.dest, values)


def add_renamed(parser, new: str, old: str, **kwargs) -> None:
    """The flag ``new`` (``add_argument`` keywords ``kwargs``) and its old spelling ``old``, hidden,
    which still works and warns once (``stepsize --var`` is ``--variable``)."""
    dest = kwargs.pop("dest", dest_of(new))
    parser.add_argument(new, dest=dest, action=_Spelling, new=new, old=old, **kwargs)
    kwargs["help"] = argparse.SUPPRESS
    kwargs.pop("default", None)
    parser.add_argument(old, dest=dest, action=_Spelling, new=new, old=old, default=argparse.SUPPRESS,
                        **kwargs)


def parse(option: Option, text: str):
    """``text`` read by the option's parser; a parse failure names the flag."""
    if not isinstance(text, str):
        return text
    try:
        return option.parse(text)
    except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
        kind = getattr(option.parse, "__name__", "value")
        raise ValidationError(f"{option.flag}: invalid {kind} value {text!r}"
                              + (f" ({exc})" if isinstance(exc, argparse.ArgumentTypeError) else "")) from None


__all__ = ["flag_table", "add_flags", "add_renamed", "given", "parse", "dest_of", "flag_of", "off_flag", "choices_of",
           "metavar_of"]
