# Two commands do everything on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install test lint typecheck pytest demo bench golden clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	# CPU build of torch first, so the train extra never pulls a CUDA build.
	$(PY) -m pip install torch==2.13.0
	$(PY) -m pip install -e '.[dev,train]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(VENV)/bin/pytest -n 2

test: lint typecheck pytest

demo: $(STAMP)
	$(VENV)/bin/spider-env demo

bench: $(STAMP)
	$(PY) benchmarks/bench_engine.py
	$(PY) benchmarks/bench_env.py

golden: $(STAMP)
	$(PY) tests/golden/regenerate.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
