"""Imports every SD-GT result module; each registers its results (:mod:`fedbound.theory.registry`)."""
from fedbound.theory.sdgt import lemma7, lemmas, table1, thm1, thm2, thm3, thm45  # noqa: F401
