"""``fedbound list | bound | stepsize | constants | rounds``: the registered results from the command
line.

* ``fedbound list [WHAT] [--json]``: every result with its provenance and variants (default),
  every registered algorithm with its family, network needs and options (from
  :mod:`fedbound.algorithms.registry`), every paper that ``fedbound audit`` audits (from
  :data:`fedbound.papers.PAPERS`), or the entries of any other registry (``checks`` of
  ``fedbound verify``, ``tasks``, ``pep-methods``, ``participation`` schemes, ``client-optimizers``,
  ``server-optimizers``) with their options. Every entry names its ``origin``, the module that
  registered it (a plugin's entries are listed like fedbound's own).
* ``fedbound bound ID --set NAME=VALUE ... [--variant V] [--terms] [--json]``: the bound read
  against the result's reference (its trivial bound or the initial value: "vacuous" with the
  factor in powers of ten, :meth:`fedbound.theory.evaluation.Evaluation.reading`), every step-size
  condition with its variable and cap (and whether it holds when the variable is set), every
  predicate (holds / fails), the bound's terms and every extra. With ``--terms`` its anatomy: the
  additive terms with their shares, the dominant one, and d log B / d log c for every constant
  (:meth:`~fedbound.theory.evaluation.Evaluation.anatomy`). Expressions whose constants are not
  all given are skipped and listed with the constants they lack (partial evaluation); only when
  nothing can be computed is it an error. In JSON each extra (matrices as nested lists) is a
  top-level key, the skipped ones are under ``missing``, the reading under ``reading`` and the
  anatomy (with ``--terms``) under ``anatomy``.
* ``fedbound stepsize ID --set ... [--variable NAME] [--variant V] [--json]``: the largest admissible
  value of the variable NAME (gamma, eta_l, ...; needed only when the variant constrains several)
  and the binding condition; implicit conditions are solved numerically.
* ``fedbound constants ID [--variant V] [--json]``: each constant of a result (of one variant with
  ``--variant``) with its meaning, its domain for the result (and the assumption that narrows the
  declared one), its roles (step variable, rounds, vector input, ...) and its source: the paper
  that declares it (or "shared") with its seed text, the result's equation and seed lines, and
  where the result uses it, with the equation and lines each part cites
  (:meth:`fedbound.theory.Result.constant_info`).
* ``fedbound rounds --eps E --set ... [--json]``: rounds to eps of every method of SD-GT's Table I;
  with ``--result ID`` the smallest value of that result's rounds variable (T or R) at which its
  bound is <= eps. Table I's comparison says which regime makes SD-GT's guarantee the weaker one
  (:func:`fedbound.theory.sdgt.table1.regime`).

Constants are the short names a result sees in its paper's scope (``K`` for SD-GT's K); a vector
input (one entry per client) is given as comma-separated numbers, ``--set p_i=0.2,0.3,0.5``.

The commands are generic over :func:`fedbound.theory.results`; the variant used is named in every
output. Bad input (unknown name, malformed ``--set``, value outside its domain) raises a
:class:`~fedbound.errors.FedboundError`, which ``fedbound`` prints as one line with exit status 2.
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import argparse
import functools
import json
import textwrap

import numpy as np

from fedbound.cli.flags import add_renamed
from fedbound.errors import UnknownNameError, ValidationError
from fedbound.jsonable import jsonable
from fedbound.readout import number

#: sympy and the theory registry, bound by :func:`_with_theory` when a command runs (their ~0.3 s
#: import is not needed for ``--help``)
sp = S = get = results = RESULTS = None


def _with_theory(run):
    """``run(args)`` after importing sympy and :mod:`fedbound.theory` into this module."""
    @functools.wraps(run)
    def wrapper(args):
        global sp, S, get, results, RESULTS
        import sympy as sp
        from fedbound.theory import RESULTS, get, results
        from fedbound.theory import symbols as S
        return run(args)
    return wrapper

#: the registries ``fedbound list WHAT`` lists generically: WHAT -> (module defining it, kind)
REGISTRY_LISTS = {
    "checks": ("fedbound.verify.registry", "check"),
    "tasks": ("fedbound.tasks.registry", "task"),
    "pep-methods": ("fedbound.pep.method", "pep method"),
    "participation": ("fedbound.network.sampling", "participation"),
    "client-optimizers": ("fedbound.algorithms.optim.registry", "client optimizer"),
    "server-optimizers": ("fedbound.algorithms.optim.registry", "server optimizer"),
}
#: what ``fedbound list`` can list
LISTS = ("results", "algorithms", "papers", *REGISTRY_LISTS)

#: top-level JSON keys of ``fedbound bound`` that an extra may not take
RESERVED_KEYS = ("result", "variant", "title", "lhs", "provenance", "constants", "bound",
                 "conditions", "all_conditions_hold", "terms", "predicates", "missing", "reading",
                 "anatomy")


def register(subparsers) -> None:
    p = subparsers.add_parser("list", help=SUMMARIES["list"],
                              description="List every registered result with provenance and variants, "
                                          "every registered algorithm with its options, every paper "
                                          "that `fedbound audit` audits, or the entries of another "
                                          "registry (verify checks, tasks, PEP methods, participation "
                                          "schemes, client and server optimizers) with their options; "
                                          "plugins' entries included.")
    p.add_argument("what", nargs="?", choices=LISTS, default="results",
                   help="what to list (default: results)")
    p.add_argument("--json", action="store_true", help="print JSON to stdout")
    p.set_defaults(func=run_list)

    for name, func in (("bound", run_bound), ("stepsize", run_stepsize)):
        text = SUMMARIES[name]
        p = subparsers.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        p.add_argument("result", metavar="ID", help="result id, e.g. sdgt.thm2 (see `fedbound list`)")
        _add_common(p)
        if name == "stepsize":
            add_renamed(p, "--variable", "--var", metavar="NAME", default=None,
                        help="the variable to maximize, max_step(variable=) in Python (default: the "
                             "one the variant's conditions constrain)")
        else:
            p.add_argument("--terms", action="store_true",
                           help="the bound's anatomy: its additive terms with their shares, the "
                                "dominant one, and d log B / d log c for every constant")
        p.set_defaults(func=func)

    p = subparsers.add_parser("constants", help=SUMMARIES["constants"],
                              description="Each constant of a result with its meaning, its domain for "
                                          "the result, its roles and its source (declaring paper, the "
                                          "result's equation and seed lines, where the result uses it).")
    p.add_argument("result", metavar="ID", help="result id, e.g. sdgt.thm3 (see `fedbound list`)")
    p.add_argument("--variant", help="only the constants of this variant (default: every variant)")
    p.add_argument("--json", action="store_true", help="print JSON to stdout")
    p.set_defaults(func=run_constants)

    p = subparsers.add_parser("rounds", help=SUMMARIES["rounds"],
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
    parser.add_argument("--variant", help="variant name (default: the result's default variant, "
                                           "marked in `fedbound constants ID` and `fedbound list`)")
    parser.add_argument("--json", action="store_true", help="print JSON to stdout")


def parse_constants(pairs: list[str], result=None) -> dict[str, float | list[float]]:
    """``["K=5", "p=0.64"]`` -> ``{"K": 5.0, "p": 0.64}``: every name a constant of ``result``'s
    scope (of every paper without a result; a vector input as ``a,b,c``), every value a number in
    its domain (checked by the result, see :meth:`fedbound.theory.Result.check`)."""
    if result is None:
        results()  # every paper module, so that every constant is declared (a result's module
        # declares the constants of its scope)
    scope = None if result is None else result.scope
    out: dict[str, float | list[float]] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValidationError(f"--set expects NAME=VALUE, got {pair!r}")
        try:
            constant = S.constant(name, scope)
        except UnknownNameError:
            # a constant of the paper that a module this command did not import declares (a
            # look-up imports only the result's module): the same answer as after a full load
            results()
            if result is not None and name not in S.visible(scope):
                result.check({name: 0.0})   # the Python API's error: the closest and all its constants
            constant = S.constant(name, scope)
        try:
            value = [float(x) for x in text.split(",")] if constant.ndim else float(text)
        except ValueError:
            raise ValidationError(f"--set {name}: value must be a number, got {text!r}") from None
        if name in out:
            raise ValidationError(f"--set {name} given twice ({out[name]} and {value})")
        out[name] = value
    if result is not None:
        result.check(out)
    else:
        S.check_values({k: np.asarray(v) for k, v in out.items()}, scope)
    return out


def _fmt(value, indent: int = 0) -> str:
    """A number with 6 significant digits (:func:`fedbound.readout.number`: 0.99999995 is
    ``1 - 5.0e-08``); an array on aligned lines (continuation lines indented by ``indent``)."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return str(bool(arr)) if arr.dtype == bool else number(float(arr))
    if arr.dtype == bool:
        return np.array2string(arr, separator=", ", prefix=" " * indent)
    return np.array2string(arr, separator=", ", prefix=" " * indent,
                           formatter={"float_kind": number, "int_kind": str})


def _print_json(data) -> None:
    print(json.dumps(data, indent=2))


# -- list ------------------------------------------------------------------------------------------
def _condition(c) -> dict:
    return {"name": c.name, "variable": c.variable_name, "relation": c.relation,
            "cap": sp.sstr(c.cap), "implicit": c.implicit, "source": c.source}


def _entry(r) -> dict:
    """A result as JSON: statement, provenance, variants with their formulas, known issues."""
    return {
        "id": r.id, "origin": RESULTS.origin(r.id), "scope": r.scope, "title": r.title,
        "statement": r.statement, "lhs": r.lhs,
        "provenance": {"seed": r.provenance.seed, "equation": r.provenance.equation,
                       "lines": r.provenance.lines},
        "assumptions": list(r.assumptions),
        "requires": {k: f"{d.describe()} ({why})" for k, (d, why) in r.requires.items()},
        "rounds": r.rounds,
        "default_variant": r.default_variant,
        "variants": [{"name": v.name, "description": v.description, "settings": dict(v.settings),
                      "constants": v.constants(),
                      "bound": None if v.bound is None else sp.sstr(v.bound),
                      "conditions": [_condition(c) for c in v.conditions],
                      "predicates": [{"name": pr.name, "lhs": sp.sstr(pr.lhs), "relation": pr.relation,
                                      "rhs": sp.sstr(pr.rhs), "source": pr.source}
                                     for pr in v.predicates],
                      "extras": list(v.extras)}
                     for v in r.variants.values()],
        "known_issues": [{"id": f.id, "text": f.text} for f in r.known_issues],
    }


def _options(entry) -> list[dict]:
    return [{"name": o.name, "flag": o.flag, "type": getattr(o.parse, "__name__", "str"),
             "help": o.help, "default": jsonable(o.default), "required": o.required,
             "deprecated": list(o.old_flags)}
            for o in entry.options]


def _algorithm_entry(spec, origin: str) -> dict:
    return {"name": spec.name, "summary": spec.summary, "family": spec.family,
            "network": spec.network, "origin": origin, "options": _options(spec)}


def _list_algorithms() -> tuple[list[dict], list[str]]:
    from fedbound.algorithms import registry  # imports torch: only for this listing

    entries = [_algorithm_entry(spec, registry.ALGORITHMS.origin(spec.name))
               for spec in registry.specs()]
    lines = []
    for e in entries:
        lines += [f"{e['name']}: {e['summary']}",
                  f"    {e['family']}; network {e['network']}; options: "
                  + ", ".join(o["flag"] for o in e["options"])]
    return entries, lines


def _list_papers() -> tuple[list[dict], list[str]]:
    from fedbound.papers import PAPERS

    def cited(c) -> dict:
        """The paper's title, authors, year, venue and arXiv id (null where there is none)."""
        if c is None:
            return dict.fromkeys(("title", "authors", "year", "venue", "arxiv"))
        return {"title": c.title, "authors": list(c.authors), "year": c.year, "venue": c.venue,
                "arxiv": c.arxiv or None}

    papers = sorted(PAPERS, key=lambda p: p.name)   # the order of `fedbound audit all`
    entries = [{"name": p.name, "summary": p.summary, "seed": p.seed, "origin": PAPERS.origin(p.name),
                **cited(p.citation)} for p in papers]
    lines = []
    for p, e in zip(papers, entries):
        lines.append(f"{e['name']}: {e['summary']}" + (f" (seed {e['seed']})" if e["seed"] else ""))
        if p.citation is not None:
            lines.append(f"    {p.citation}")
    return entries, lines


def _list_registry(what: str) -> tuple[list[dict], list[str]]:
    """A registry of :data:`REGISTRY_LISTS`: name, summary, origin and options of every entry (its
    module imported only for this listing)."""
    import importlib

    from fedbound.registry import REGISTRIES

    module, kind = REGISTRY_LISTS[what]
    importlib.import_module(module)
    registry = REGISTRIES[kind]
    entries = [{"name": e.name, "summary": e.summary, "origin": registry.origin(e.name),
                "options": _options(e)} for e in registry]
    lines = []
    for e in entries:
        lines.append(f"{e['name']}: {e['summary']}")
        if e["options"]:
            lines.append("    options: " + ", ".join(o["flag"] for o in e["options"]))
    return entries, lines


def _list_results() -> tuple[list[dict], list[str]]:
    _with_theory(lambda args: None)(None)     # sympy and fedbound.theory into this module
    lines = []
    for r in results():
        flags = ", ".join(f.id for f in r.known_issues)
        lines += [f"{r.id}: {r.title}",
                  f"    {r.provenance}; variants: {_variants(r, r.variants)}" + (f"; flags: {flags}" if flags else "")]
    return [_entry(r) for r in results()], lines


def _listing(what: str) -> tuple[list[dict], list[str]]:
    """(JSON entries, text lines) of ``fedbound list WHAT``, from the on-disk cache when this
    source and these plugins listed it before (:mod:`fedbound.cache`; the key holds every plugin's
    fingerprint), else computed (importing every module of the registry) and stored."""
    from fedbound import cache
    from fedbound.registry import plugin_fingerprint, plugin_requests

    plugins = [f"{spec}={plugin_fingerprint(spec)}" for spec, _ in plugin_requests()]
    key = None if any(p.endswith("=None") for p in plugins) else cache.key_of(what, *plugins)
    found = None if key is None else cache.read_json("list", key)
    if isinstance(found, dict) and isinstance(found.get("entries"), list) and isinstance(found.get("lines"), list):
        return found["entries"], found["lines"]
    make = {"results": _list_results, "algorithms": _list_algorithms, "papers": _list_papers}.get(what)
    entries, lines = make() if make is not None else _list_registry(what)
    if key is not None:
        cache.store_text("list", key, json.dumps({"entries": jsonable(entries), "lines": lines}))
    return entries, lines


def run_list(args) -> int:
    """``fedbound list [WHAT] [--json]`` (module doc), answered from the cache when it can
    (:func:`_listing`: under 0.5 s, no registry imported)."""
    entries, lines = _listing(args.what)
    if args.json:
        _print_json(entries)
    else:
        print("\n".join(lines))
    return 0


# -- bound -----------------------------------------------------------------------------------------
@_with_theory
def run_bound(args) -> int:
    result = get(args.result)
    variant = result.variant(args.variant)
    constants = parse_constants(args.sets, result)
    ev = result.evaluate(variant.name, partial=True, **constants)
    computed = (ev.bound is not None or ev.caps or ev.predicates or ev.extras or ev.terms)
    if not computed:
        raise ValidationError(f"{result.id} ({variant.name}) needs constant(s) "
                              f"{', '.join(ev.missing_constants)}; it uses {', '.join(variant.constants())}")
    conditions = [{"name": c.name, "variable": c.variable_name, "relation": c.relation,
                   "cap": jsonable(ev.caps[c.name]) if c.name in ev.caps else None, "source": c.source,
                   "holds": jsonable(ev.conditions_hold[c.name]) if c.name in ev.conditions_hold else None}
                  for c in variant.conditions]
    predicates = [{"name": pr.name, "statement": str(pr),
                   "holds": jsonable(ev.predicates[pr.name]) if pr.name in ev.predicates else None}
                  for pr in variant.predicates]
    reading = None if ev.bound is None else ev.reading()
    anatomy = _anatomy(result, variant, ev) if args.terms else None
    if args.json:
        data = {"result": result.id, "variant": variant.name, "title": result.title, "lhs": result.lhs,
                "provenance": str(result.provenance), "constants": constants,
                "bound": None if ev.bound is None else jsonable(ev.bound),
                "conditions": conditions,
                "all_conditions_hold": jsonable(ev.all_conditions_hold) if ev.conditions_hold else None,
                "terms": {k: jsonable(v) for k, v in ev.terms.items()}}
        if reading is not None:
            data["reading"] = reading.to_dict()
        if anatomy is not None:
            data["anatomy"] = anatomy.to_dict()
        if predicates:
            data["predicates"] = predicates
        if ev.missing:
            data["missing"] = ev.missing
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
        if reading.reference is not None:
            print(f"  reading: {reading.words()}")
        elif result.reference is not None:
            print(f"  reading: set {', '.join(_reference_needs(result, ev))} to read the bound against "
                  f"{result.reference.describe()}")
    if anatomy is not None:
        _print_anatomy(anatomy)
    if conditions:
        variables = variant.variables()
        given = [f"{x} = {constants[x]:g}" for x in variables if x in constants]
        header = f" at {', '.join(given)}" if given else f" (set {' or '.join(variables)} to check)"
        print(f"  step-size conditions{header}:")
        for c in conditions:
            status = "" if c["holds"] is None else ("  holds" if np.all(c["holds"]) else "  VIOLATED")
            cap = "(not computed)" if c["cap"] is None else _fmt(c["cap"])
            print(f"    {c['name']}: {c['variable']} {c['relation']} {cap}{status}")
    if predicates:
        print("  predicates:")
        for pr in predicates:
            status = "not computed" if pr["holds"] is None else ("holds" if np.all(pr["holds"]) else "FAILS")
            print(f"    {pr['name']}: {pr['statement']}  {status}")
    if ev.terms and anatomy is None:
        print("  terms:")
        for k, v in ev.terms.items():
            print(f"    {k} = {_fmt(v)}")
    if ev.extras:
        print("  extras:")
        for k, v in ev.extras.items():
            print(f"    {k} = {_fmt(v, indent=len(k) + 7)}")
    if ev.missing:
        print("  not computed (missing constants):")
        for key, names in ev.missing.items():
            print(f"    {key}: set {', '.join(names)}")
    return 0


def _reference_needs(result, ev) -> list[str]:
    """The constants of the result's reference that the evaluation was not given."""
    return sorted(S.short_name(s) for s in result.reference.expr.free_symbols
                  if S.short_name(s) not in ev.values)


def _anatomy(result, variant, ev):
    """``--terms``: the evaluation's anatomy; an error naming what is missing when the bound was not
    computed."""
    if ev.bound is None:
        raise ValidationError(f"--terms needs the bound of {result.id} ({variant.name}); set "
                              f"{', '.join(ev.missing.get('bound', ev.missing_constants))}")
    return ev.anatomy()


def _print_anatomy(anatomy) -> None:
    """The terms by share (largest first), the dominant one, the sensitivities by size."""
    print(f"  terms (largest share first; dominant: {anatomy.dominant.label}):")
    terms = sorted(anatomy.terms, key=lambda t: -abs(anatomy.at(t.share)))
    width = min(max(len(t.label) for t in terms), 60)
    for t in terms:
        label = t.label if len(t.label) <= 60 else t.label[:57] + "..."
        print(f"    {label:<{width}}  {_fmt(t.value)}  ({number(100 * anatomy.at(t.share), 3)}% of the bound)")
        if t.label != t.expression:
            print(f"    {'':<{width}}  = {t.expression}")
    print("  sensitivities S = d log B / d log c (B scales like c^S near these constants) and the "
          "decades of B each constant accounts for at its value (S log10 c), largest first:")
    slopes = dict(anatomy.ranked())
    for name, decades in anatomy.decades():
        print(f"    {name:<12} S = {number(slopes[name], 4):<14} {number(decades, 3)} decades")
    if anatomy.undifferentiated:
        print(f"    not differentiated (a function sympy cannot differentiate): "
              f"{', '.join(anatomy.undifferentiated)}")


# -- stepsize --------------------------------------------------------------------------------------
@_with_theory
def run_stepsize(args) -> int:
    result = get(args.result)
    variant = result.variant(args.variant)
    constants = parse_constants(args.sets, result)
    best, binding = result.max_step(variant.name, variable=args.variable, **constants)
    variable = args.variable or variant.variables()[0]
    conds = [c for c in variant.conditions if c.variable_name == variable]
    at = {variable: float(best)} if any(c.implicit for c in conds) and np.isfinite(best) else {}
    ev = result.evaluate(variant.name, partial=True, **{k: x for k, x in constants.items() if k != variable},
                         **at)
    caps = {c.name: jsonable(ev.caps[c.name]) for c in conds if c.name in ev.caps}
    if args.json:
        _print_json({"result": result.id, "variant": variant.name, "constants": constants,
                     "variable": variable, f"{variable}_max": jsonable(best), "binding": str(binding),
                     "implicit": any(c.implicit for c in conds), "caps": caps})
        return 0
    where = f" (caps at {variable} = {_fmt(best)}, implicit conditions solved to relative 1e-12)" if at else ""
    print(f"{result.id} [variant: {variant.name}] largest admissible {variable} = {_fmt(best)} "
          f"(binding: {binding})")
    if where:
        print(f"   {where.strip()}")
    for name, cap in caps.items():
        print(f"    {name}: {_fmt(cap)}")
    return 0


# -- constants -------------------------------------------------------------------------------------
@_with_theory
def run_constants(args) -> int:
    result = get(args.result)
    variants = list(result.variants) if args.variant is None else [result.variant(args.variant).name]
    infos = result.constant_info(args.variant)
    provenance = result.provenance
    if args.json:
        _print_json({"result": result.id, "title": result.title, "scope": result.scope,
                     "provenance": {"seed": provenance.seed, "equation": provenance.equation,
                                    "lines": provenance.lines},
                     "variants": variants, "constants": [info.to_dict() for info in infos]})
        return 0
    print(f"{result.id}: {result.title}")
    print(f"  stated in {provenance}; variants: {_variants(result, variants)}")
    width = max((len(info.name) for info in infos), default=0)
    pad = " " * (width + 4)
    for info in infos:
        print(f"  {info.name:<{width}}  {info.meaning}")
        domain = info.domain.describe()
        if info.assumption:
            domain += f" (assumes {info.assumption}; declared {info.declared.describe()})"
        declared = (f"declared by {info.scope} (seed {info.seed})" if info.scope else "shared by every paper")
        print(f"{pad}{', '.join(info.roles)}; {domain}; {declared}")
        for line in _uses(info.uses, variants):
            print(f"{pad}{line}")
    return 0


def _variants(result, names) -> str:
    """``main, appendix (default), rederived``: the variant names, the default one marked (what
    ``bound`` and ``stepsize`` use without ``--variant``)."""
    return ", ".join(f"{v} (default)" if v == result.default_variant else v for v in names)


def _uses(uses, variants: list[str]) -> list[str]:
    """The uses of a constant, one line per kind, step variable, cited source and variants:
    ``in conditions (a), (b) on gamma: (97) [L1029] [appendix]``, ``in the bound``."""
    groups: dict[tuple, list[str]] = {}
    for u in uses:
        groups.setdefault((u.kind, u.on, u.source, u.variants), []).append(u.name)
    lines = []
    for (kind, on, source, used_by), names in groups.items():
        named = [nm for nm in names if nm]
        text = ("in " + (f"the {kind}" if not named else kind + ("s" if len(named) > 1 else "") + " "
                         + ", ".join(named))
                + (f" on {on}" if on else "") + (f": {source}" if source else ""))
        lines.append(text + ("" if len(used_by) == len(variants) else f" [{', '.join(used_by)}]"))
    return lines


# -- rounds ----------------------------------------------------------------------------------------
@_with_theory
def run_rounds(args) -> int:
    if args.result:
        result = get(args.result)
        constants = parse_constants(args.sets, result)
        variant = result.variant(args.variant)
        t = result.rounds
        if t in constants:
            raise ValidationError(f"rounds solves for {t}; do not --set {t}")
        if "eps" in constants:
            raise ValidationError("give eps with --eps, not --set eps=...")
        rounds = result.rounds_to_eps(args.eps, variant.name, **constants)
        if args.json:
            _print_json({"result": result.id, "variant": variant.name, "eps": args.eps,
                         "constants": constants, "rounds_variable": t, "rounds": jsonable(rounds)})
        else:
            print(f"{result.id} [variant: {variant.name}] smallest {t} with bound <= {args.eps:g}: "
                  f"{_fmt(rounds)}")
        return 0
    from fedbound.theory.sdgt.table1 import METHODS, regime, table1_rounds

    constants = parse_constants(args.sets, METHODS["SD-GT"])
    if "eps" in constants:
        raise ValidationError("give eps with --eps, not --set eps=...")
    if args.variant:
        raise ValidationError("--variant needs --result (Table I has only the printed rows)")
    rounds = table1_rounds(args.eps, **constants)
    reading = regime(args.eps, **constants)
    if args.json:
        _print_json({"table": "sdgt Table I", "variant": "printed", "eps": args.eps,
                     "constants": constants, "rounds": {k: jsonable(v) for k, v in rounds.items()},
                     "regime": jsonable(reading)})
        return 0
    print(f"SD-GT Table I [variant: printed]: rounds to eps = {args.eps:g} (O-constants set to 1)")
    for method, value in rounds.items():
        print(f"    {method:<12} {_fmt(value)}")
    print(textwrap.fill(reading["words"], width=100, initial_indent="  ", subsequent_indent="  "))
    return 0
