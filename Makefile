# agent_memory: the two commands are `make demo` and `make test`; both set up everything they need.
PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
EXT_VERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" extension/agent_memory.control)
PYTHON_DIR := /usr/local/lib/agent_memory/$(EXT_VERSION)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
VENV := $(CURDIR)/.venv
CLI := $(VENV)/bin/agent-memory
# The local server's directory: .agent-memory/ here, unless root runs us from a folder the postgres user
# cannot reach (say under /root): then a directory of its own under /tmp, named after this folder.
ifeq ($(SUDO),)
  ifneq ($(shell id -u postgres >/dev/null 2>&1 && runuser -u postgres -- test -x $(CURDIR) && echo ok),ok)
    AGENT_MEMORY_HOME ?= /tmp/agent-memory-$(shell printf '%s' '$(CURDIR)' | sha256sum | cut -c1-12)
  endif
endif
export AGENT_MEMORY_HOME ?= $(CURDIR)/.agent-memory

.PHONY: demo test test-citus soak provision provision-browser build install db-start db-stop lint schema client bench-locomo bench-beam bench-beam500 bench-recall bench-ingest release clean

## demo: start the local server, install the extension, show what the product does
demo: provision db-start
	@$(CLI) install
	@$(CLI) demo

## test: lint, then every test against the real server (and Chromium, for the inspector page's browser test)
test: provision-browser db-start lint
	$(VENV)/bin/pytest

## test-citus: the Citus suite on a coordinator and two workers (builds Citus 12.1.12 from
## ../shared/vendor once; CITUS_TARBALL names another copy of its source)
test-citus: provision install
	@$(SUDO) bash extension/tools/citus.sh
	$(VENV)/bin/pytest tests/citus

## soak: the concurrency and property-based suites at length (2,000 rounds, 10x the cases of make test)
soak: provision db-start
	AGENT_MEMORY_SOAK_ROUNDS=2000 AGENT_MEMORY_PROPERTY_SCALE=10 \
	  $(VENV)/bin/pytest -s tests/sql/test_concurrency.py tests/sql/test_properties.py

## provision: Debian packages, pgvector, the virtualenv (idempotent)
provision:
	@bash extension/tools/provision.sh
provision-browser:
	@bash extension/tools/provision.sh --browser

## build: assemble the install and upgrade scripts from sql/ (needs python3 and pg_config)
build:
	@$(MAKE) -s -C extension PG_CONFIG=$(PG_CONFIG) PYTHON_DIR=$(PYTHON_DIR)

## install: the extension into PostgreSQL, the in-database Python for /usr/bin/python3
install: build
	@$(SUDO) $(MAKE) -s -C extension PG_CONFIG=$(PG_CONFIG) PYTHON_DIR=$(PYTHON_DIR) install
	@$(SUDO) bash extension/tools/install_python.sh $(PYTHON_DIR)

## db-start / db-stop: the local server in .agent-memory/
db-start: install
	@$(CLI) db start
db-stop:
	@$(CLI) db stop

## lint: ruff on the Python, sqlfluff on sql/
lint: provision
	$(VENV)/bin/ruff check plpython python-client tests extension/tools bench
	$(VENV)/bin/ruff format --check plpython python-client tests extension/tools bench
	$(VENV)/bin/mypy --strict python-client/agent_memory
	$(VENV)/bin/sqlfluff lint --processes 2 sql

## schema: write sql/schema.txt, the schema a fresh install creates (tests/sql/test_schema_snapshot.py compares)
schema: db-start
	$(VENV)/bin/python extension/tools/schema_snapshot.py "$$($(CLI) db url)"

## client: write python-client/agent_memory/methods.py, Memory's methods, from AsyncMemory's (a test checks it)
client: provision
	$(VENV)/bin/python python-client/tools/sync_methods.py

## bench-locomo: retrieval quality on LoCoMo (../shared/bench/locomo) through memory.recall
bench-locomo: db-start
	$(VENV)/bin/python bench/locomo_recall.py

## bench-beam: retrieval quality on BEAM-100K user-assistant chats (../shared/bench/beam) through memory.recall
bench-beam: db-start
	$(VENV)/bin/python bench/beam_recall.py

## bench-beam500: retrieval quality on BEAM-500K's long conversations 11-20 (../shared/bench/beam)
bench-beam500: db-start
	$(VENV)/bin/python bench/beam500_recall.py

## bench-recall: recall latency at 10k and 100k turns against the HNSW + GIN lower bound
bench-recall: db-start
	$(VENV)/bin/python bench/recall_latency.py --turns 10000 100000

## bench-ingest: commit and enrichment throughput at 10k and 100k turns
bench-ingest: db-start
	$(VENV)/bin/python bench/ingest.py --turns 10000
	$(VENV)/bin/python bench/ingest.py --turns 100000

## release: freeze this version's install script in extension/released/ (then bump the version)
release: build
	@test ! -e extension/released/agent_memory--$(EXT_VERSION).sql || \
	  { echo "agent_memory $(EXT_VERSION) is already released"; exit 1; }
	cp extension/build/agent_memory--$(EXT_VERSION).sql extension/released/

clean:
	$(MAKE) -s -C extension PG_CONFIG=$(PG_CONFIG) clean
