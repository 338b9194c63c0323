"""``fedbound list | bound | stepsize | rounds``: the registered results from the command line.

* ``fedbound list [--json]``: every result with its provenance and variants.
* ``fedbound bound ID --set NAME=VALUE ... [--variant V] [--json]``: the bound, every step-size
  condition with its cap (and whether it holds when gamma is set), the bound's terms and every extra.
  In JSON each extra (matrices as nested lists) is a top-level key.
* ``fedbound stepsize ID --set ... [--variant V] [--json]``: the largest admissible gamma and the
  binding condition.
* ``fedbound rounds --eps E --set ... [--json]``: rounds to eps of every method of SD-GT's Table I;
  with ``--result ID`` the smallest T at which that result's bound is <= eps.

The commands are generic over :func:`fedbound.theory.results`; the variant used is named in every
output. Bad input (unknown name, malformed ``--set``, value outside its domain) raises a
:class:`~fedbound.errors.FedboundError`, which ``fedbound`` prints as one line with exit status 2.
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import sympy as sp

from fedbound.errors import ValidationError
from fedbound.jsonable import jsonable
from fedbound.theory import get, results
from fedbound.theory import symbols as S

#: top-level JSON keys of ``fedbound bound`` that an extra may not take
RESERVED_KEYS = ("result", "variant", "title", "lhs", "provenance", "constants", "bound",
                 "conditions", "all_conditions_hold", "terms")


def register(subparsers) -> None:
    p = subparsers.add_parser("list", help="list every result with provenance and variants",
                              description="List every registered result with provenance and variants.")
    p.add_argument("--json", action="store_true", help="print JSON to stdout")
    p.set_defaults(func=run_list)

    for name, func, text in (
            ("bound", run_bound, "evaluate a result's bound, step-size conditions, terms and extras"),
            ("stepsize", run_stepsize, "largest admissible step size gamma and the binding condition")):
        p = subparsers.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        p.add_argument("result", metavar="ID", help="result id, e.g. sdgt.thm2 (see `fedbound list`)")
        _add_common(p)
        p.set_defaults(func=func)

    p = subparsers.add_parser("rounds", help="rounds to eps: SD-GT Table I, or one result's bound",
                              description="Rounds to reach eps for every method of SD-GT's Table I "
                                          "(O-constants set to 1), or with --result the smallest T "
                                          "at which that result's bound is <= eps.")
    p.add_argument("--eps", type=float, required=True, help="target accuracy eps > 0")
    p.add_argument("--result", metavar="ID", help="a result whose bound depends on T")
    _add_common(p)
    p.set_defaults(func=run_rounds)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--set", dest="sets", action="extend", nargs="+", default=[],
                        metavar="NAME=VALUE",
                        help="constants, e.g. --set K=5 p=0.64 (or --set K=5 --set p=0.64)")
    parser.add_argument("--variant", help="variant name (default: the result's first variant)")
    parser.add_argument("--json", action="store_true", help="print JSON to stdout")


def parse_constants(pairs: list[str]) -> dict[str, float]:
    """``["K=5", "p=0.64"]`` -> ``{"K": 5.0, "p": 0.64}``, every name known and value in its domain."""
    results()  # load every paper module, so that every constant is declared
    out: dict[str, float] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValidationError(f"--set expects NAME=VALUE, got {pair!r}")
        S.constant(name)
        try:
            value = float(text)
        except ValueError:
            raise ValidationError(f"--set {name}: value must be a number, got {text!r}") from None
        if name in out:
            raise ValidationError(f"--set {name} given twice ({out[name]:g} and {value:g})")
        out[name] = value
    S.check_values({k: np.asarray(v) for k, v in out.items()})
    return out


def _fmt(value, indent: int = 0) -> str:
    """A number as %.6g; an array on aligned lines (continuation lines indented by ``indent``)."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return str(bool(arr)) if arr.dtype == bool else f"{float(arr):.6g}"
    return np.array2string(arr, precision=6, separator=", ", prefix=" " * indent)


def _print_json(data) -> None:
    print(json.dumps(data, indent=2))


# -- list ------------------------------------------------------------------------------------------
def _entry(r) -> dict:
    """A result as JSON: statement, provenance, variants with their formulas, known issues."""
    return {
        "id": r.id, "title": r.title, "statement": r.statement, "lhs": r.lhs,
        "provenance": {"seed": r.provenance.seed, "equation": r.provenance.equation,
                       "lines": r.provenance.lines},
        "assumptions": list(r.assumptions),
        "default_variant": r.default_variant,
        "variants": [{"name": v.name, "description": v.description, "constants": v.constants(),
                      "bound": None if v.bound is None else sp.sstr(v.bound),
                      "conditions": [{"name": c.name, "relation": "<" if c.strict else "<=",
                                      "cap": sp.sstr(c.cap), "source": c.source}
                                     for c in v.conditions],
                      "extras": list(v.extras)}
                     for v in r.variants.values()],
        "known_issues": [{"id": f.id, "text": f.text} for f in r.known_issues],
    }


def run_list(args) -> int:
    if args.json:
        _print_json([_entry(r) for r in results()])
        return 0
    for r in results():
        flags = ", ".join(f.id for f in r.known_issues)
        print(f"{r.id}: {r.title}")
        print(f"    {r.provenance}; variants: {', '.join(r.variants)}" + (f"; flags: {flags}" if flags else ""))
    return 0


# -- bound -----------------------------------------------------------------------------------------
def run_bound(args) -> int:
    result = get(args.result)
    variant = result.variant(args.variant)
    constants = parse_constants(args.sets)
    ev = result.evaluate(variant.name, **constants)
    conditions = [{"name": c.name, "relation": "<" if c.strict else "<=", "cap": jsonable(ev.caps[c.name]),
                   "source": c.source,
                   "holds": jsonable(ev.conditions_hold[c.name]) if c.name in ev.conditions_hold else None}
                  for c in variant.conditions]
    if args.json:
        data = {"result": result.id, "variant": variant.name, "title": result.title, "lhs": result.lhs,
                "provenance": str(result.provenance), "constants": constants,
                "bound": None if ev.bound is None else jsonable(ev.bound),
                "conditions": conditions,
                "all_conditions_hold": jsonable(ev.all_conditions_hold) if ev.conditions_hold else None,
                "terms": {k: jsonable(v) for k, v in ev.terms.items()}}
        for key, value in ev.extras.items():
            if key in RESERVED_KEYS:
                raise ValueError(f"{result.id}: extra {key!r} clashes with a reserved JSON key")
            data[key] = jsonable(value)
        _print_json(data)
        return 0
    print(f"{result.id} [variant: {variant.name}] {result.title}")
    print(f"  {result.provenance}")
    if ev.bound is not None:
        print(f"  {result.lhs or 'lhs'} <= {_fmt(ev.bound)}")
    if conditions:
        given = f" at gamma = {constants['gamma']:g}" if "gamma" in constants else " (set gamma to check)"
        print(f"  step-size conditions{given}:")
        for c in conditions:
            status = "" if c["holds"] is None else ("  holds" if np.all(c["holds"]) else "  VIOLATED")
            print(f"    {c['name']}: gamma {c['relation']} {_fmt(c['cap'])}{status}")
    if ev.terms:
        print("  terms:")
        for k, v in ev.terms.items():
            print(f"    {k} = {_fmt(v)}")
    if ev.extras:
        print("  extras:")
        for k, v in ev.extras.items():
            print(f"    {k} = {_fmt(v, indent=len(k) + 7)}")
    return 0


# -- stepsize --------------------------------------------------------------------------------------
def run_stepsize(args) -> int:
    result = get(args.result)
    variant = result.variant(args.variant)
    constants = parse_constants(args.sets)
    gamma_max, binding = result.max_step(variant.name, **constants)
    caps = {}
    for c in variant.conditions:
        fn, names = variant.compiled(f"cap:{c.name}")
        with np.errstate(divide="ignore", invalid="ignore"):
            caps[c.name] = jsonable(fn(*(constants[nm] for nm in names)))
    if args.json:
        _print_json({"result": result.id, "variant": variant.name, "constants": constants,
                     "gamma_max": jsonable(gamma_max), "binding": str(binding), "caps": caps})
        return 0
    print(f"{result.id} [variant: {variant.name}] largest admissible gamma = {_fmt(gamma_max)} "
          f"(binding: {binding})")
    for name, cap in caps.items():
        print(f"    {name}: {_fmt(cap)}")
    return 0


# -- rounds ----------------------------------------------------------------------------------------
def run_rounds(args) -> int:
    constants = parse_constants(args.sets)
    if "eps" in constants:
        raise ValidationError("give eps with --eps, not --set eps=...")
    S.check_values({"eps": np.asarray(args.eps)})
    if args.result:
        result = get(args.result)
        variant = result.variant(args.variant)
        if "T" in constants:
            raise ValidationError("rounds solves for T; do not --set T")
        rounds = result.rounds_to_eps(args.eps, variant.name, **constants)
        if args.json:
            _print_json({"result": result.id, "variant": variant.name, "eps": args.eps,
                         "constants": constants, "rounds": jsonable(rounds)})
        else:
            print(f"{result.id} [variant: {variant.name}] smallest T with bound <= {args.eps:g}: "
                  f"{_fmt(rounds)}")
        return 0
    if args.variant:
        raise ValidationError("--variant needs --result (Table I has only the printed rows)")
    from fedbound.theory.sdgt.table1 import table1_rounds

    rounds = table1_rounds(args.eps, **constants)
    if args.json:
        _print_json({"table": "sdgt Table I", "variant": "printed", "eps": args.eps,
                     "constants": constants, "rounds": {k: jsonable(v) for k, v in rounds.items()}})
        return 0
    print(f"SD-GT Table I [variant: printed]: rounds to eps = {args.eps:g} (O-constants set to 1)")
    for method, value in rounds.items():
        print(f"    {method:<12} {_fmt(value)}")
    return 0
