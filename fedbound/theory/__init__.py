"""fedbound.theory: results of the papers as executable objects (bounds, step-size conditions,
predicates, rates, audits). sympy is the single source of truth; numbers come from expressions
compiled once. Constants are shared (L, mu, sigma, gamma, T, n, eps) or scoped per paper
(:mod:`fedbound.theory.symbols`). Subpackages per paper (:mod:`fedbound.theory.sdgt`); generic
linear algebra in :mod:`fedbound.theory.linalg`.

The names below load on first use (PEP 562), so that a sympy-free module such as
:mod:`fedbound.theory.sdgt.stationary` can be imported without sympy.

>>> from fedbound.theory import get
>>> get("sdgt.thm2").max_step(K=5, L=1.0, p=0.64, q=0.5)
StepSize(value=0.000129..., binding='thm2 (83a)')
"""
import importlib

#: public name -> the module of fedbound.theory that defines it
_EXPORTS = {
    "get": "registry", "register": "registry", "results": "registry", "RESULTS": "registry",
    "Result": "result", "Variant": "variant", "StepCondition": "variant", "Predicate": "variant",
    "Switch": "variant", "switch_variants": "variant", "Preparation": "statement",
    "Provenance": "statement", "Flag": "statement", "Evaluation": "evaluation",
    "spectral_quantities": "linalg", "StepSize": "stepsize",
}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"fedbound.theory.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
