# Two set-up commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO := build/demo

.PHONY: demo test lint e2e bench quality quality-dev quality-fixtures fit docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,mcp,dev]'
	touch $(STAMP)

## demo: index the bundled 257-rule corpus and route a few tasks
demo: $(STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	cp -r fixtures/cursorrules/.agents $(DEMO)/
	cd $(DEMO) && ../../$(BIN)/engram index
	cd $(DEMO) && ../../$(BIN)/engram load "write cypress tests for the login page" | head -40
	cd $(DEMO) && ../../$(BIN)/engram load --dry-run "our flutter widgets rebuild too often" | head -20
	cd $(DEMO) && ../../$(BIN)/engram load "plan a trip to Kyoto"
	cd $(DEMO) && ../../$(BIN)/engram benchmark ../../fixtures/bench/cursorrules.json

## test: install and run the whole test suite
test: $(STAMP)
	$(BIN)/python -m pytest

## lint: ruff (lint rules, and the formatting of every file) and mypy over engram/
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## e2e: the real Claude Code, Codex and Gemini CLIs (pinned, from npm, cached) against a mock model on loopback
e2e: $(STAMP)
	$(BIN)/python tests/e2e/install_hosts.py
	$(BIN)/python tests/e2e/isolated.py $(BIN)/python -m pytest tests/e2e -m e2e -p no:cacheprovider

## bench: speed of every command on 1,000 and 10,000 generated memories (BENCH_LARGE=1 adds 100,000)
bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

## quality: routing quality of every bundled set, fitting and held-out parts, beside plain BM25
quality: $(STAMP)
	$(BIN)/python benchmarks/quality.py

## quality-dev: the same with the development sets of real text (QUALITY_DEV: their folder; skipped where absent)
QUALITY_DEV ?= ../shared/quality-dev
quality-dev: $(STAMP)
	@if [ -d "$(QUALITY_DEV)" ]; then $(BIN)/python benchmarks/quality.py --quality-dev "$(QUALITY_DEV)" --depth; \
	else echo "quality-dev: SKIPPED: no development sets at $(QUALITY_DEV) (set QUALITY_DEV=...)"; fi

## fit: fit the relevance decision (engram/relevance_weights.py) and rewrite docs/routing-tables.md
fit: $(STAMP)
	$(BIN)/pip install --quiet -e '.[fit]'
	@if [ -d "$(QUALITY_DEV)" ]; then dev="--quality-dev $(QUALITY_DEV)"; \
	else echo "fit: no development sets at $(QUALITY_DEV): fitting on the bundled sets only"; dev=""; fi; \
	$(BIN)/python benchmarks/fit.py $$dev --write --report docs/routing-tables.md

## quality-fixtures: `engram benchmark` on the bundled fixtures, one table each, as a user would run it
quality-fixtures: $(STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	cp -r fixtures/cursorrules/.agents $(DEMO)/
	cd $(DEMO) && ../../$(BIN)/engram benchmark ../../fixtures/bench/cursorrules.json
	cd $(DEMO) && ../../$(BIN)/engram benchmark ../../fixtures/bench/cursorrules-heldout.json
	cd $(DEMO) && ../../$(BIN)/engram benchmark ../../fixtures/bench/cursorrules-heldout-2.json
	cd $(DEMO) && ../../$(BIN)/engram benchmark ../../fixtures/bench/cursorrules-heldout-3.json
	rm -rf build/multilingual && cp -r fixtures/multilingual build/multilingual
	cd build/multilingual && ../../$(BIN)/engram benchmark ../../fixtures/bench/multilingual.json
	$(BIN)/python benchmarks/subsets.py

## docs: regenerate docs/commands.md from every command's --help (tests/test_docs.py checks it)
docs: $(STAMP)
	$(BIN)/python -m engram.cli_reference docs/commands.md

clean:
	rm -rf $(VENV) build
