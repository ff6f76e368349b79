# `make run` and `make test` are the only set-up a fresh machine needs.
# Both create .venv when it is missing and (re)install docshelf with its dev extras whenever
# pyproject.toml changes. Wherever torch gets installed, pin torch==2.13.0 (DEVELOPERS.md).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# The main job on the embedded default. Until indexing lands: cut the project's own docs/.
run: $(STAMP)
	$(BIN)/docshelf chunk docs

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy --strict src

pytest: $(STAMP)
	$(BIN)/pytest

$(VENV)/.installed-bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python bench/chunking.py
	$(BIN)/python bench/pathological.py
	$(BIN)/python bench/search.py
	$(BIN)/python bench/git_read.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
