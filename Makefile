# Set-up and entry points. `make generate` and `make test` work on a fresh machine:
# they create .venv, install the pinned requirements and, when root, Debian's stockfish.
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=

.PHONY: setup stockfish debian-stockfish engine node families chromium maia generate test lint bench demo

$(VENV)/.installed: requirements.txt requirements-dev.txt pyproject.toml
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

# A build the reference ladder (data/ladders/stockfish-17.1, Stockfish 17.1) serves, which
# `play` prefers: a native 17.1 where one is installed (Debian 13's package), else the pinned
# portable build (`make engine`). An explicit STOCKFISH_PATH is left alone.
REFERENCE := Stockfish 17.1
stockfish:
	@if [ -n "$$STOCKFISH_PATH" ]; then exit 0; fi; \
	for sf in "$$(command -v stockfish)" /usr/games/stockfish; do \
	    if [ -n "$$sf" ] && [ -x "$$sf" ] && echo quit | "$$sf" 2>/dev/null | head -1 \
	        | grep -q "^$(REFERENCE)"; then exit 0; fi; \
	done; \
	$(MAKE) --no-print-directory engine

# The tests' fast native engine: Debian's package (15.1 on Debian 12, the engine of
# data/ladders/stockfish-15.1), as root; elsewhere the tests use the portable build.
debian-stockfish:
	@if [ -x /usr/games/stockfish ] || [ "$$(id -u)" != 0 ]; then exit 0; fi; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stockfish

# The portable engine: npm's WebAssembly Stockfish at the version package-lock.json pins, under
# node_modules/ (node runs it; it plays exactly as the native build of its version).
engine: node_modules/stockfish/package.json

node_modules/stockfish/package.json: package.json package-lock.json | node
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# node and npm come from the OS (Debian's nodejs and npm, Homebrew, the Node.js installer).
node:
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; \
	else \
	    echo "node and npm are missing: install Debian's 'nodejs' and 'npm' packages," \
	         "Homebrew's 'node' or the Node.js installer" >&2; \
	    exit 1; \
	fi

# Engines of other families than Stockfish, the validation set's test players (never rungs):
# Debian's GNU Chess, Toga II, Glaurung and Sjeng.
FAMILIES := gnuchess toga2 glaurung sjeng
families:
	@missing=""; for e in $(FAMILIES); do command -v $$e >/dev/null 2>&1 \
	    || [ -x /usr/games/$$e ] || missing="$$missing $$e"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	        --no-install-recommends $$missing; \
	else \
	    echo "missing engines:$$missing (install Debian's packages of those names)" >&2; \
	    exit 1; \
	fi

# The report site's tests open pages in a real headless browser: Debian's chromium.
chromium:
	@if [ -n "$$CHROMIUM_PATH" ] || command -v chromium >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else \
	    echo "Chromium is missing: install Debian's 'chromium' package or set CHROMIUM_PATH" >&2; \
	    exit 1; \
	fi

setup: $(VENV)/.installed stockfish

# The Maia-1 nets (the `maia:net=N` players): downloaded from the Maia authors' repository at a
# pinned commit into data/maia/ and checked by sha256 (GPL-3: never committed here). With
# MAIA_NETS=DIR set, the nets are read from DIR instead and nothing is downloaded.
maia: setup
	$(PY) -c "import sys; from chess_eval.cli import run_cli; from chess_eval.benchmark.players.maia import \
	fetch_all; sys.exit(run_cli(lambda: print(*fetch_all(), sep=chr(10))))"

# The product in six to seven minutes on two cores (the README's figure), with no API key and no
# network: three baselines on questions.csv, a short play of one against the ladder, the
# leaderboard and the site. A rerun answers from the cache. DEMO=DIR writes elsewhere.
DEMO ?= output/demo
demo: setup
	$(PY) benchmark.py run --model random --out $(DEMO)/results
	$(PY) benchmark.py run --model stockfish:nodes=1000 --out $(DEMO)/results
	$(PY) benchmark.py run --model stockfish:nodes=10000 --out $(DEMO)/results
	$(PY) benchmark.py play --model stockfish:nodes=1000 --max-games 24 --out $(DEMO)/results
	$(PY) benchmark.py leaderboard --results $(DEMO)/results
	$(PY) benchmark.py report --results $(DEMO)/results --out $(DEMO)/site
	@echo "demo done: open $(DEMO)/site/index.html (results in $(DEMO)/results)"

generate: setup
	$(PY) generate.py $(ARGS)

# CI runs this: the linters first (a style or type error fails it in seconds), then the tests
# on four xdist workers, even on two cores: about a fifth of a test's time is waiting (a
# server's delay, a back-off, another process's reply), which the extra workers fill.
# --dist loadgroup keeps each file, and its fixtures, on one worker, and the files that share
# the pipeline's small build on one (tests/conftest.py groups them).
test: setup debian-stockfish chromium engine families lint
	$(PY) -m pytest -q --numprocesses 4 --dist loadgroup tests $(ARGS)

# ruff on everything; mypy, strict, on chess_eval/ (settings and their reasons in pyproject.toml).
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: setup
	for script in bench/[a-z]*.py; do $(PY) -m bench.$$(basename $$script .py) || exit 1; done
