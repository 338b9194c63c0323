# Setup lives here, never in a shell history: both targets work on a machine with only python3.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# the runtime dependencies only (`make demo`): the test extras (jax, ray, optax, flwr, ipykernel) are
# gigabytes a demo does not need
RUNTIME := $(VENV)/.installed-runtime

.PHONY: demo test bench setup clean

$(RUNTIME): pyproject.toml
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
	$(BIN)/python -m pytest -q -n 2 tests

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) demo_out .pytest_cache .hypothesis
