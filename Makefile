# Two commands matter: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PROTO_FILES := $(shell find proto -name '*.proto' 2>/dev/null)

.PHONY: run test lint proto bench fuzz chaos install clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

proto: $(STAMP)
	@if [ -n "$(PROTO_FILES)" ]; then \
	  $(BIN)/python -m grpc_tools.protoc -Iproto --python_out=src --pyi_out=src \
	    --grpc_python_out=src $(PROTO_FILES); \
	  find src/partnerapi -type d -exec touch {}/__init__.py \; ; \
	fi

run: $(STAMP) proto
	PARTNER_API_ALLOW_HTTP_WEBHOOKS=$${PARTNER_API_ALLOW_HTTP_WEBHOOKS:-1} $(BIN)/partner-api serve

lint: $(STAMP) proto
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src

test: $(STAMP) proto lint
	$(BIN)/python -m pytest -n 4

bench: $(STAMP) proto
	$(BIN)/python -m bench

clean:
	rm -rf var .pytest_cache .mypy_cache .ruff_cache
