# The two commands a newcomer needs are `make demo` and `make test`; the rest are their parts.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DATA ?= var/demo-data
DEMO_RECORDS ?= 400
NARA_KG := $(BIN)/nara-kg
export DAGSTER_HOME ?= $(CURDIR)/var/dagster_home

help:  ## List the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

# uv installs the same resolution as pip (checked: the same versions of all 188 packages) in
# less time: torch's CUDA wheels alone are some 5 GB unpacked. --compile-bytecode as pip does:
# where PYTHONDONTWRITEBYTECODE is set, nothing would write the .pyc files later, and every
# process (each Dagster step) would compile torch and transformers again on import.
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip 'uv==0.13.9'
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e '.[dev]'
	touch $(STAMP)

WEB_STAMP := nara_kg/api/static/.built

$(WEB_STAMP): web/build.sh web/package.json web/package-lock.json $(wildcard web/src/*)
	web/build.sh

web: $(WEB_STAMP)  ## Build the chat page (npm packages + web/src into nara_kg/api/static)

venv: $(STAMP) $(WEB_STAMP)  ## Create .venv with the package and its dev tools, build the chat page

neo4j-start: $(STAMP)  ## Assemble (first time) and start the local Neo4j 5.26 + GDS 2.13
	$(NARA_KG) neo4j start

neo4j-stop: $(STAMP)  ## Stop the local Neo4j
	$(NARA_KG) neo4j stop

demo-data: $(STAMP)  ## Generate the demo export into var/demo-data
	@test -f $(DEMO_DATA)/questions.jsonl || $(NARA_KG) demo-data $(DEMO_DATA) --records $(DEMO_RECORDS)

demo: demo-data neo4j-start  ## Build the whole knowledge graph on the demo data, then say where to look
	NARA_DATA_DIR=$(CURDIR)/$(DEMO_DATA) $(NARA_KG) build
	@echo
	@echo "The knowledge graph is built. Where to look:"
	@echo "  Dagster UI:   make ui   -> http://127.0.0.1:3000 (assets, partitions, lineage, metadata, checks)"
	@echo "  Chat page:    make serve -> http://127.0.0.1:8000 (questions, records, the provenance graph; API at /docs)"
	@echo "  Neo4j:"
	@$(NARA_KG) neo4j status | sed 's/^/                /'
	@echo "  Sample query: $(NARA_KG) search \"cartography in Raven Landing\""
	@echo "                $(NARA_KG) ask \"Who created the correspondence concerning flood control in Raven Landing?\""
	@echo "                $(NARA_KG) ask \"What are the main themes of the flood control records?\" --json"
	@echo "  Evaluation:   $(NARA_KG) eval --questions $(DEMO_DATA)/questions.jsonl"

serve: venv neo4j-start  ## The question-answering API and chat page on http://127.0.0.1:8000
	$(NARA_KG) serve

ui: $(STAMP)  ## Open the Dagster UI on the built graph
	NARA_DATA_DIR=$${NARA_DATA_DIR:-$(CURDIR)/$(DEMO_DATA)} $(NARA_KG) ui

bench: neo4j-start  ## Benchmark suite (BENCH_RECORDS=20000 by default); results in BENCHMARKS.md
	$(NARA_KG) bench --records $${BENCH_RECORDS:-20000}

lint: $(STAMP)  ## ruff + mypy + the import contracts (import-linter, pyproject.toml)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

validate: $(STAMP)  ## dagster definitions validate
	mkdir -p $(DAGSTER_HOME)
	$(BIN)/dagster definitions validate -w workspace.yaml

# Two workers: the pure tests (tests/unit) run beside the graph tests, which one worker runs
# in order (tests/conftest.py). The 30 slowest tests are printed (what CI's time goes to).
PYTEST_ARGS ?= -n 2 --durations=30 --durations-min=10
# Starts Neo4j only if it is not running, and stops it afterwards only if it started it.
test: $(STAMP)  ## Run the whole test suite (starts the local Neo4j if needed, leaves nothing running)
	@set -o pipefail; started=0; \
	if [ -z "$${NEO4J_URI:-}" ]; then \
	  if ! $(NARA_KG) neo4j status --json | grep -q '"running": true'; then \
	    $(NARA_KG) neo4j start && started=1 || exit 1; \
	  fi; \
	fi; \
	$(BIN)/pytest $(PYTEST_ARGS); status=$$?; \
	if [ $$started = 1 ]; then $(NARA_KG) neo4j stop; fi; \
	exit $$status

ci: lint validate test  ## What .ci/run runs

clean:  ## Remove build outputs and working data (keeps .venv and the Neo4j home)
	rm -rf var .pytest_cache .mypy_cache .ruff_cache

.PHONY: help venv web serve neo4j-start neo4j-stop demo-data demo ui bench lint validate test ci clean
