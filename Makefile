# Entry points, all from a fresh clone with only Python 3.11 and pip:
#   make play   install into .venv and play Slaiga against bots at this terminal
#   make test   install with dev extras into .venv and run the whole test suite (CI)
#   make check  the fast tier while you work: lint, and every test that starts no child
#               process (no peer processes, network namespaces or tmux) and is not slow
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: play test check install install-dev lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

# editable install: only a change to pyproject.toml needs it again (make check stays quick)
DEV_STAMP := $(VENV)/.installed-dev

install-dev: $(DEV_STAMP)

$(DEV_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

play: install
	$(BIN)/slaiga play slaiga

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q --durations=25

# tests/conftest.py marks the tiers; a test that starts a child process unmarked fails
check: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q -m "not process and not slow" --durations=10

lint: install-dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: install
	$(BIN)/slaiga bench all

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
