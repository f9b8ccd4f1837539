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
# and pytest keeps the test modules it rewrote (asserts) for the next process to read, which
# that setting forbids too (each pytest process would rewrite every test module: ~8 CPU-s)
unexport PYTHONDONTWRITEBYTECODE
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider --durations=25

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(COMPILE)
	@# Four pytest processes side by side fill both cores: the pure computation (marked
	@# 'beside' by tests/conftest.py: no child process, no socket, and the engine's and
	@# crypto's tests) and the rest (peer processes and sockets, waiting on them much of the
	@# time), each in two parts of whole files (--part K/N, tests/conftest.py). Together they
	@# run every test once; all four must pass. The last one's output is shown as it runs,
	@# the others' after it (whole, for one that failed).
	@$(PYTEST) -m beside --part 1/2 > .tests-pure1.log 2>&1 & p1=$$!; \
	$(PYTEST) -m beside --part 2/2 > .tests-pure2.log 2>&1 & p2=$$!; \
	$(PYTEST) -m "not beside" --part 1/2 > .tests-rest1.log 2>&1 & r1=$$!; \
	$(PYTEST) -m "not beside" --part 2/2; r2=$$?; \
	wait $$p1; s1=$$?; wait $$p2; s2=$$?; wait $$r1; s3=$$?; \
	for run in "pure1 $$s1" "pure2 $$s2" "rest1 $$s3"; do set -- $$run; \
		echo "--- .tests-$$1.log (exit status $$2)"; \
		if [ $$2 -eq 0 ]; then tail -n 30 .tests-$$1.log; else cat .tests-$$1.log; fi; \
	done; \
	echo "--- exit status: pure 1/2 $$s1, pure 2/2 $$s2, rest 1/2 $$s3, rest 2/2 $$r2"; \
	test $$s1 -eq 0 && test $$s2 -eq 0 && test $$s3 -eq 0 && test $$r2 -eq 0

# tests/conftest.py marks the tiers; a test that starts a child process unmarked fails
check: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(COMPILE)
	@# three pytest processes side by side, as in make test: the engine's, crypto's and
	@# command line's tests, and the rest of the fast tier in two parts; all must pass
	@$(BIN)/python -m pytest -q -p no:cacheprovider -m "not process and not slow" \
		tests/engine tests/crypto tests/cli > .check-pure.log 2>&1 & bg=$$!; \
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not process and not slow" --part 1/2 \
		--ignore=tests/engine --ignore=tests/crypto --ignore=tests/cli > .check-rest1.log 2>&1 & r1=$$!; \
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "not process and not slow" --part 2/2 \
		--durations=10 --ignore=tests/engine --ignore=tests/crypto --ignore=tests/cli; \
	rest=$$?; wait $$r1; rest1=$$?; wait $$bg; pure=$$?; \
	for run in "rest1 $$rest1" "pure $$pure"; do set -- $$run; \
		echo "--- .check-$$1.log (exit status $$2)"; \
		if [ $$2 -eq 0 ]; then tail -n 3 .check-$$1.log; else cat .check-$$1.log; fi; \
	done; \
	test $$rest -eq 0 && test $$rest1 -eq 0 && test $$pure -eq 0

lint: install-dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: install
	$(BIN)/slaiga bench all

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
