# Two entry points: `make demo` and `make test`. Each builds .venv from scratch if missing,
# with every extra (pipelines, dask, test, bench); a light install is `pip install .`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint install bench clean notebooks

$(STAMP): pyproject.toml setup.py $(wildcard sim_bridge/*.pyx sim_bridge/*.pxd)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "installing straggler-mtl and its dependencies into $(VENV) (a few minutes the first time)"
	$(BIN)/python -m pip install --progress-bar on -c constraints.txt -e '.[pipelines,dask,test,bench]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 --durations=15 -q

demo: $(STAMP)
	@$(BIN)/straggler data fetch --only swim --only alibaba-v2017-batch-task --only alibaba-v2018-machine-usage-subset \
	  || echo "make demo: could not fetch the public data (see above); the demo falls back to the synthetic workload"
	$(BIN)/straggler demo --out runs/demo --overwrite

# executed notebooks/<name>.ipynb from the jupytext scripts, on the venv's kernel
notebooks: $(STAMP)
	$(BIN)/python -m ipykernel install --sys-prefix --name straggler-mtl --display-name "straggler-mtl (.venv)"
	$(BIN)/python -m pipelines._notebooks

bench: $(STAMP)
	for f in bench/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache .mypy_cache
