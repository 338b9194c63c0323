"""``fedbound pep METHOD [options] [--json]``: a worst-case certificate by performance estimation.

One subcommand per method of the registry :data:`fedbound.pep.PEP_METHODS` (``gd``, ``fedavg``,
``fedprox``, ``fednova``, ``scaffold``, ``scaffnew``, ``dgd``, ``gt``, ``sdgt``, and those of plugins,
e.g. a method of one's own round registered by :func:`fedbound.pep.register_round_method`), its flags built
from the method's options by :mod:`fedbound.cli.flags` (``--`` + the option name with dashes:
``--lam-lo``; the underscore spellings of before, ``--lam_lo``, still work and warn) and validated
by :mod:`fedbound.validate` through :meth:`fedbound.pep.method.Method.config`.
Prints the certified worst case, the solver status, the quadratic lower bound, the papers' bound
(``theory``, null where none), the replay check and the seconds; ``--json`` prints the
:class:`fedbound.pep.Certificate` as one object. A PEP beyond the size limit is refused (exit 2)
while it is being built, with the size it reached.
"""
from __future__ import annotations

from fedbound.cli.commands import SUMMARIES

import argparse
import json

from fedbound.cli.flags import add_flags, flag_table, given
from fedbound.pep import PEP_METHODS, certify
from fedbound.pep.certificate import TIGHT_RTOL


def _run(args: argparse.Namespace) -> int:
    method = PEP_METHODS.get(args.method)
    cert = certify(args.method, **given(args, method, flag_table([method])))
    if args.json:
        print(json.dumps(cert.to_dict(), allow_nan=False))
        return 0
    print(f"pep {cert.method}: worst case {cert.worst_case:.6g} ({cert.status}, {cert.solver}, "
          f"Gram {cert.gram_size}x{cert.gram_size}, {cert.seconds:.1f} s)")
    print(f"  quadratic lower bound {cert.lower_bound:.6g} ({_tightness(cert)}); replay of the worst function "
          f"{cert.replay_value:.6g} (query mismatch {cert.replay_mismatch:.1e})")
    if cert.theory is not None:
        print(f"  theory {cert.theory:.6g}: {cert.theory_source}"
              + ("" if cert.theory_applies else f" [does not apply: {cert.theory_note}]"))
    print(f"  verdict: {cert.verdict}")
    return 0


def _tightness(cert) -> str:
    """The verdict's first word in numbers: the quadratic lower bound's share of the worst case
    ("tight" within TIGHT_RTOL of it, else "gap": :mod:`fedbound.pep.certificate`)."""
    if cert.verdict.startswith("tight"):
        return f"the worst case, to {TIGHT_RTOL:g}: tight"
    return f"{cert.lower_bound / cert.worst_case:.4g} of the worst case: gap"   # gap: worst case > 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "pep", help=SUMMARIES["pep"],
        description="Solve the performance-estimation SDP of a method: its exact worst case over the "
                    "function class, a lower bound from explicit quadratics and the papers' bound.")
    methods = parser.add_subparsers(dest="method", metavar="METHOD", parser_class=type(parser))
    methods.required = True
    for m in PEP_METHODS:
        sub = methods.add_parser(m.name, help=m.summary, description=m.summary)
        add_flags(sub, flag_table([m]), users=False)
        sub.add_argument("--json", action="store_true", help="print the certificate as JSON")
        sub.set_defaults(func=_run)
