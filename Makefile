# Onceflow: `make up` installs what is missing and starts the pipeline; `make test` runs every test.
SHELL := /bin/bash
VENV := .venv/bin

.PHONY: up down status test lint schema unit clean logs

up:
	@stack/bootstrap.sh
	@$(VENV)/onceflow-stack up

down:
	@if [ -x $(VENV)/onceflow-stack ]; then $(VENV)/onceflow-stack down; fi

status:
	@$(VENV)/onceflow-stack status

lint:
	$(VENV)/ruff check .
	$(VENV)/ruff format --check .
	$(VENV)/mypy

# The running database has exactly the schema of onceflow/schema (no drift from migrations).
schema:
	$(VENV)/python -m alembic -c migrations/alembic.ini check

# Pure Python: no root, Java, Maven or Postgres needed.
unit:
	$(VENV)/pytest -q tests/unit

test: up lint schema
	$(VENV)/pytest -q -p no:cacheprovider

clean: down
	rm -rf .stack
