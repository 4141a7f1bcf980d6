# Two commands matter: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PROTO_FILES := $(shell find proto -name '*.proto' 2>/dev/null)
# Node tools pinned in package.json / package-lock.json: Redocly (the OpenAPI document), buf (the protos).
NODE_STAMP := node_modules/.installed-stamp
REDOCLY := REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true node_modules/.bin/redocly
OPENAPI_DOC := var/openapi.json

.PHONY: run test lint openapi-lint proto bench fuzz chaos install clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $(NODE_STAMP)

install: $(STAMP) $(NODE_STAMP)

proto: $(STAMP)
	@if [ -n "$(PROTO_FILES)" ]; then \
	  $(BIN)/python -m grpc_tools.protoc -Iproto --python_out=src --pyi_out=src \
	    --grpc_python_out=src $(PROTO_FILES); \
	  find src/partnerapi -type d -exec touch {}/__init__.py \; ; \
	fi

run: $(STAMP) proto
	PARTNER_API_STOP_WITH_PARENT=1 PARTNER_API_ALLOW_HTTP_WEBHOOKS=$${PARTNER_API_ALLOW_HTTP_WEBHOOKS:-1} $(BIN)/partner-api serve

lint: $(STAMP) $(NODE_STAMP) proto openapi-lint
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy src
	node_modules/.bin/buf lint proto

# The OpenAPI document, dumped by the app factory (no server), must pass openapi-spec-validator
# and Redocly's `recommended` rules with no warning at all (Redocly fails only on errors).
openapi-lint: $(STAMP) proto $(NODE_STAMP)
	$(BIN)/python -m runtime.openapi_export $(OPENAPI_DOC)
	$(BIN)/openapi-spec-validator $(OPENAPI_DOC)
	@$(REDOCLY) lint $(OPENAPI_DOC) > var/redocly.log 2>&1; status=$$?; \
	  grep -v '[║╔╚]' var/redocly.log | grep -v '^ *$$'; \
	  test $$status -eq 0 && ! grep -q 'You have [0-9]* warning' var/redocly.log

test: $(STAMP) proto lint
	$(BIN)/python -m pytest -n 4

# The orders scenario drives its sustained load with wrk (Debian package), installed if missing.
bench: $(STAMP) proto
	@command -v wrk >/dev/null || { SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO="sudo"; \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk; }
	$(BIN)/python -m bench

# The crash, fault and rate-limit tests at PARTNER_API_CHAOS_SCALE times the load and rounds of
# their short versions in `make test` (PostgreSQL and NATS needed).
chaos: $(STAMP) proto
	PARTNER_API_CHAOS_SCALE=$${PARTNER_API_CHAOS_SCALE:-4} $(BIN)/python -m pytest -p no:randomly -s \
	  tests/test_chaos_crash.py tests/test_chaos_faults.py tests/test_platform_rate_limit.py

# Schemathesis against the served OpenAPI document with PARTNER_API_FUZZ_EXAMPLES (default 60)
# random examples per operation, on SQLite and PostgreSQL; `make test` runs a seeded short pass.
fuzz: $(STAMP) proto
	PARTNER_API_FUZZ_DEEP=1 $(BIN)/python -m pytest -p no:randomly -s tests/test_fuzz_openapi.py

clean:
	rm -rf var .pytest_cache .mypy_cache .ruff_cache node_modules
