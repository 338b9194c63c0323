"""The certified methods of :mod:`fedbound.pep` (issue 13), one module per family; each module
registers its methods in :data:`fedbound.pep.method.PEP_METHODS` where they are defined."""
