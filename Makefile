# `make run` and `make test` are the only set-up a fresh machine needs.
# Both create .venv when it is missing and (re)install docshelf with its dev extras whenever
# pyproject.toml or constraints.txt changes. Every install passes `-c constraints.txt`, which pins
# torch==2.13.0 (DEVELOPERS.md); wherever torch gets installed, pin it the same way.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev

.PHONY: run test lint typecheck pytest reference-parsers browser wheel-test bench screens reliability cli-reference clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

# The main job on the embedded default: index the project's own docs/ (at its current commit,
# or as a plain directory outside git) into the default SQLite store, then ask it a question.
run: $(STAMP)
	$(BIN)/docshelf index . --docs docs --workspace docshelf
	$(BIN)/docshelf search "How does docshelf cut a Markdown file into chunks?" --workspace docshelf -k 3

test: lint typecheck pytest wheel-test

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

typecheck: $(STAMP)
	$(BIN)/mypy --strict src

# One test process per core (pytest-xdist): the tests wait on servers, git and npx as much as
# they compute, and `make test` must stay under 15 minutes on two cores.
pytest: $(STAMP) reference-parsers browser
	$(BIN)/pytest -n auto

# The reference parsers the format tests compare the chunkers with: docutils comes with the dev
# extras; remark-mdx (npm, pinned by tests/reference/package-lock.json) and Asciidoctor (Debian's
# package, installed when missing, which needs root as CI has) are installed here.
REFERENCE := tests/reference
reference-parsers: $(REFERENCE)/node_modules/.installed
	@command -v asciidoctor >/dev/null || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq asciidoctor >/dev/null; }

# The web page's tests (tests/test_web_page.py) and bench/screens.py drive Debian's Chromium
# through Debian's chromium-driver, installed here when missing (root, as CI has); no browser is
# downloaded at run time.
browser:
	@{ test -x /usr/bin/chromium && test -x /usr/bin/chromedriver; } || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; }

$(REFERENCE)/node_modules/.installed: $(REFERENCE)/package-lock.json
	cd $(REFERENCE) && npm ci --no-audit --no-fund --silent
	touch $@

# The packaging check: build the wheel, install it with constraints.txt into a fresh virtual
# environment under /tmp, and run docshelf --help, chunk, index and search from there only.
wheel-test: $(STAMP)
	BUILD_PYTHON=$(BIN)/python PYTHON=$(PYTHON) tests/wheel/check_wheel.sh

$(VENV)/.installed-bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,bench]'
	touch $@

bench: $(VENV)/.installed-bench reference-parsers
	$(BIN)/python bench/chunking.py
	$(BIN)/python bench/agreement.py
	$(BIN)/python bench/pathological.py
	$(BIN)/python bench/search.py
	$(BIN)/python bench/git_read.py
	$(BIN)/python bench/indexing.py
	$(BIN)/python bench/retrieval.py
	$(BIN)/python bench/serve.py
	$(BIN)/python bench/query_start.py
	$(BIN)/python bench/serve_sync.py
	$(BIN)/python bench/file_texts.py --postgres

# docs/cli.md, the command-line reference, from the commands' own --help
# (tests/test_cli_reference.py fails while it differs): run after changing a command's help.
cli-reference: $(STAMP)
	$(BIN)/python scripts/cli_reference.py

# The README's screenshots of the web page (docs/images/), taken in headless Chromium.
screens: $(STAMP) browser
	$(BIN)/python bench/screens.py

# The long reliability runs (RELIABILITY.md): load, random kills, hostile repositories, fuzzing.
reliability: $(STAMP)
	$(BIN)/python bench/load.py
	$(BIN)/python bench/kill.py
	$(BIN)/python bench/hostile_repos.py
	$(BIN)/python bench/fuzz.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
