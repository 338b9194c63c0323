r"""Certificates for the audit's verdicts (issue 32): every verdict of ``fedbound audit`` says what
backs it, and no verdict is decided by a float tolerance.

The audit (:mod:`fedbound.theory.audit`) samples a claim in floating point; the certifier then
reads the claim exactly, from the claim's own code and the sympy its results carry, with no extra
code from whoever wrote the claim (a plugin's theorem included):

* :mod:`~fedbound.theory.certify.trace`: the claim's numpy code run on exact numbers (rationals,
  algebraic and transcendental numbers, every comparison decided exactly) or on symbols (every
  comparison a branch: the claim as a formula, path by path);
* :mod:`~fedbound.theory.certify.form`: the claim's variables and domains (the sampled box, and
  the whole admissible domain), its exact value at a point, its symbolic form;
* :mod:`~fedbound.theory.certify.admissible`: the result's domains and relations, exactly;
* :mod:`~fedbound.theory.certify.smt`: z3's nonlinear real arithmetic (square roots, min, max,
  abs, piecewise cases and reciprocals eliminated by auxiliary variables);
* :mod:`~fedbound.theory.certify.spectral`: the spectral radius of a symbolic nonnegative matrix,
  compared through the signs of principal minors (M-matrix tests) in z3's queries;
* :mod:`~fedbound.theory.certify.roots`: a root known by its equation (SD-GT Theorem 5's K*) as an
  exact number whose digits are proved by exact sign changes;
* :mod:`~fedbound.theory.certify.interval`: branch and bound in python-flint's arb balls with
  monotonicity (powers, logarithms, exponentials on the sampled box; spectral radii of nonnegative
  matrices by Perron-Frobenius monotonicity and Collatz-Wielandt bounds);
* :mod:`~fedbound.theory.certify.certifier`: the order of the attempts and the budget of each
  ``--prove`` level; :mod:`~fedbound.theory.certify.evidence`: the kinds of evidence.

The numeric procedures of the papers get exact twins where an exact value exists (the spectral
radius of SD-GT Theorem 3's 4 x 4 matrix as an algebraic number at a point, and over symbols the
opaque Perron root that z3 compares through minors, :mod:`fedbound.theory.linalg`;
geometric sums; sums of 1/t^2; the root K* of (118); an implicit step-size cap x <= h(x) with h
non-increasing, :mod:`fedbound.theory.stepsize`); a solver's output is made a proof where a
certificate can be checked exactly (the PEP claims: rational dual multipliers,
:mod:`fedbound.pep.dual`), and where nothing exact exists the evidence says ``numeric``. z3 and
python-flint are imported only when the audit proves.
"""
