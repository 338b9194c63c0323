"""fedbound's version, on the ground floor: the package face (``fedbound.__version__``) hands it on,
and the on-disk cache (:mod:`fedbound.cache`) keys its entries by it without importing the face."""

__version__ = "0.1.0"

__all__ = ["__version__"]
