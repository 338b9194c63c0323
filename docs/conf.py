"""Sphinx configuration of fedbound's documentation site (docs/README.md says why Sphinx, and how it
is built and tested)."""
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path[:0] = [str(DOCS.parent), str(DOCS / "_ext")]
# the executed pages' kernels import this checkout's fedbound, whatever the working directory
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(DOCS.parent),
                                                         os.environ.get("PYTHONPATH")]))
os.environ.setdefault("MPLBACKEND", "Agg")

import fedbound  # noqa: E402

project = "fedbound"
author = "the fedbound developers"
copyright = "the fedbound developers"
release = version = fedbound.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "myst_nb",
    "fedbound_docs",
]
exclude_patterns = ["_build"]
root_doc = "index"
smartquotes = False                 # flags keep their two dashes: --local-steps, not an en dash

# -- the pages written by hand: MyST Markdown, their {code-cell} blocks executed while building ------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "auto"          # pages without outputs (every .md page) are executed
nb_execution_excludepatterns = ["gallery/*"]   # the gallery shows the notebooks as executed
nb_execution_timeout = 600
nb_execution_raise_on_error = True  # a failing example fails the build
nb_execution_in_temp = True         # files an example writes go to a temporary folder
nb_merge_streams = True

# -- the audit verdicts on the paper pages (fedbound_docs.PaperDirective) ----------------------------
# `fedbound demo`'s scale: random samples and the domain's extremes, no adversarial search
fedbound_audit = {"samples": 1000, "iterations": 0, "seed": 0}

# -- the API reference -------------------------------------------------------------------------------
autodoc_default_options = {"member-order": "bysource"}   # pages: fedbound_docs._api_pages
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

# -- HTML ---------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"fedbound {release}"
html_static_path = ["_static"]
html_css_files = ["fedbound.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_show_sourcelink = False
# pages without sub-pages get no (empty) section navigation on the left
html_sidebars = {page: [] for page in ("index", "getting-started", "extending", "cli", "about")}
