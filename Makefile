# `make run` and `make test` are the only set-up a fresh machine needs.
# Both create .venv when it is missing and (re)install docshelf with its dev extras whenever
# pyproject.toml changes. Wherever torch gets installed, pin torch==2.13.0 (DEVELOPERS.md).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: run test lint typecheck pytest bench reliability clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# The main job on the embedded default: index the project's own docs/ (at its current commit,
# or as a plain directory outside git) into the default SQLite store, then ask it a question.
run: $(STAMP)
	$(BIN)/docshelf index . --docs docs --workspace docshelf
	$(BIN)/docshelf search "How does docshelf cut a Markdown file into chunks?" --workspace docshelf -k 3

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
	$(BIN)/python bench/indexing.py
	$(BIN)/python bench/retrieval.py
	$(BIN)/python bench/serve.py

# The long reliability runs (RELIABILITY.md): load, random kills, hostile repositories, fuzzing.
reliability: $(STAMP)
	$(BIN)/python bench/load.py
	$(BIN)/python bench/kill.py
	$(BIN)/python bench/hostile_repos.py
	$(BIN)/python bench/fuzz.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
