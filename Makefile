# Setup lives here, never in a shell history: both targets work on a machine with only python3.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# the runtime dependencies only (`make demo`): the test extras (jax, ray, optax, flwr, ipykernel) are
# gigabytes a demo does not need
RUNTIME := $(VENV)/.installed-runtime

.PHONY: demo test test-kernels bench setup clean docs

# setup.py and the kernel's sources too: `pip install -e .` compiles the MLP's local steps in place
$(RUNTIME): pyproject.toml setup.py fedbound/tasks/_kernels.c fedbound/tasks/_mlp_steps.h
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install torch==2.13.0
	$(BIN)/python -m pip install -e .
	touch $(RUNTIME)

$(STAMP): $(RUNTIME)
	$(BIN)/python -m pip install -e '.[test]'
	$(BIN)/python -m pip install -e '.[flower]' || echo "flower extra not installed: the Flower equivalence suite (tests/algorithms/test_flower_equivalence.py) will be skipped"
	touch $(STAMP)

setup: $(STAMP)

demo: $(RUNTIME)
	$(BIN)/fedbound demo --out demo_out --overwrite

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal tests

# the numeric tests again with the kernels of other CPUs forced (no AVX, AVX2, AVX-512 where this
# CPU has them; tests/kernel_sets.py says how)
test-kernels: $(STAMP)
	$(BIN)/python tests/kernel_sets.py -- -n 2

# the documentation site into docs/_build/html, warnings as errors (docs/about.md): the docs extra
# on top of the same setup, then Sphinx, which runs every example of the pages while it builds
DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) demo_out .pytest_cache .hypothesis docs/_build docs/papers docs/api docs/gallery
