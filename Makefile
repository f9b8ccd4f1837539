# Two entry points, both from a fresh clone with only Python 3.11 and pip:
#   make play   install into .venv and play Slaiga against bots at this terminal
#   make test   install with dev extras into .venv and run the whole test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: play test install install-dev lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# installed once; again only when pyproject.toml changes (the code is an editable install)
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

install: $(VENV)/.installed

install-dev: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'

play: $(VENV)/.installed
	$(BIN)/slaiga play slaiga

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q

lint: install-dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: install
	$(BIN)/slaiga bench all

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
