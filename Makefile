SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
LINT_PATHS := $(wildcard services tests bench)

.PHONY: help
help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	@test -x $(UV) || $(VENV)/bin/pip install -q --disable-pip-version-check uv==0.13.9
	$(UV) pip install -q --python $(PY) -e '.[dev]'
	@touch $@

.PHONY: venv
venv: $(VENV)/.installed ## Create .venv with the pinned dependencies

.PHONY: proto
proto: venv ## Generate protobuf messages, gRPC stubs and .pyi type stubs
	$(PY) -m services.kit.protogen

.PHONY: proto-check
proto-check: proto ## Fail when the generated code is stale
	@git diff --exit-code --stat -- services/contracts || (echo "generated code is stale: run make proto" && exit 1)
	@test -z "$$(git status --porcelain -- services/contracts)" || (git status --porcelain -- services/contracts; echo "untracked generated files: run make proto and commit" && exit 1)

.PHONY: lint
lint: venv ## ruff lint and format check
	$(VENV)/bin/ruff check $(LINT_PATHS)
	$(VENV)/bin/ruff format --check $(LINT_PATHS)

.PHONY: fmt
fmt: venv ## Format the code
	$(VENV)/bin/ruff check --fix $(LINT_PATHS)
	$(VENV)/bin/ruff format $(LINT_PATHS)

.PHONY: typecheck
typecheck: venv ## mypy over the services
	$(VENV)/bin/mypy services
	$(VENV)/bin/mypy --strict services/kit
	$(VENV)/bin/mypy --strict --follow-imports=silent services/gateway

.PHONY: migrate
migrate: venv ## Run every service's migrations against the configured databases
	$(PY) -m services.devrun migrate

.PHONY: run
run: venv ## Start the whole system (embedded PostgreSQL and NATS when none is configured)
	$(PY) -m services.devrun run

.PHONY: test
test: venv $(if $(CI),proto-check lint typecheck) ## Run all tests (unit, integration, e2e)
	$(PY) -m pytest -q -p no:cacheprovider

.PHONY: bench
bench: venv ## Every benchmark of bench/run.py: indexing, quality, replay, determinism, latency, cochange
	$(PY) -m bench.run

.PHONY: soak
soak: venv ## Mixed traffic with NATS restarted and hostapp killed once: lost, flaps, duplicates, p99 (SOAK_SECONDS=600)
	$(PY) -m bench.soak --seconds $${SOAK_SECONDS:-600}

.PHONY: clean
clean: ## Remove the virtualenv and run state
	rm -rf $(VENV) .run
