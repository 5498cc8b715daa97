# Two entry points: `make demo` and `make test`. Each builds .venv from scratch if missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint install bench clean

$(STAMP): pyproject.toml setup.py $(wildcard sim_bridge/*.pyx sim_bridge/*.pxd)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,bench]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n 2 --durations=15 -q

demo: $(STAMP)
	$(BIN)/straggler demo --out runs/demo

bench: $(STAMP)
	for f in bench/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache
