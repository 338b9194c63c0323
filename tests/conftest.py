"""Suite-wide hypothesis settings.

No per-example deadline: CI shares 2 cores and timing is not what these properties test. Under CI
(the CI environment variable) the examples are derandomized, so a CI run is reproducible; locally
hypothesis explores new examples on every run.
"""
import os

from hypothesis import settings

settings.register_profile("fedbound", deadline=None, print_blob=True)
settings.register_profile("ci", parent=settings.get_profile("fedbound"), derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "fedbound")
