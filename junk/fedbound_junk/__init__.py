"""junk: a fedbound plugin (written by ``fedbound new plugin``).

Importing the package registers everything with fedbound (``fedbound.extend``): the algorithm,
the theorem and its paper, the check against runs and the PEP method. fedbound imports it through
the entry point ``fedbound.plugins`` (pyproject.toml), or with ``fedbound --plugin fedbound_junk``.
"""
from fedbound_junk import algorithm, theory, pep  # noqa: F401  (each module registers at import)
