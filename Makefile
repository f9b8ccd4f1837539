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

# installed once; again only when pyproject.toml changes (the code is an editable install)
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

install: $(VENV)/.installed

# the same with the dev extras (so make check starts at once)
$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install-dev: $(VENV)/.installed-dev

play: $(VENV)/.installed
	$(BIN)/slaiga play slaiga

# byte-compiled once up front: every peer process of the tests imports the same modules,
# and where PYTHONDONTWRITEBYTECODE is set each would compile them all again
COMPILE := $(BIN)/python -m compileall -q -j 0 engine crypto p2p cli bench tests > /dev/null

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(COMPILE)
	@# Pure computation (marked 'beside' by tests/conftest.py: no child process, no socket,
	@# and the engine's and crypto's tests) runs beside the rest, which waits on peer
	@# processes and sockets much of the time; both must pass. Together: every test, once.
	@$(BIN)/python -m pytest -q -p no:cacheprovider -m beside --durations=25 \
		> .pure-tests.log 2>&1 & bg=$$!; \
	$(BIN)/python -m pytest -q --durations=25 -m "not beside"; \
	rest=$$?; wait $$bg; pure=$$?; echo "--- the pure tests (-m beside, run beside the rest)"; \
	tail -n 40 .pure-tests.log; test $$rest -eq 0 && test $$pure -eq 0

# tests/conftest.py marks the tiers; a test that starts a child process unmarked fails
check: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(COMPILE)
	@# two pytest processes side by side, as in make test: the engine's, crypto's and
	@# command line's tests, and the rest of the fast tier; both must pass
	@$(BIN)/python -m pytest -q -p no:cacheprovider -m "not process and not slow" \
		tests/engine tests/crypto tests/cli > .check-pure.log 2>&1 & bg=$$!; \
	$(BIN)/python -m pytest -q -m "not process and not slow" --durations=10 \
		--ignore=tests/engine --ignore=tests/crypto --ignore=tests/cli; \
	rest=$$?; wait $$bg; pure=$$?; echo "--- tests/engine, tests/crypto and tests/cli (run beside the rest)"; \
	tail -n 5 .check-pure.log; test $$rest -eq 0 && test $$pure -eq 0

lint: install-dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: install
	$(BIN)/slaiga bench all

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
