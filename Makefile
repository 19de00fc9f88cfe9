# Onceflow: `make up` installs what is missing and starts the pipeline; `make test` runs every test.
# ONCEFLOW_TOPOLOGY=cluster make up: the cluster topology (docs/operations.md); `make down` and
# `make status` follow whichever topology runs.
SHELL := /bin/bash
VENV := .venv/bin

.NOTPARALLEL:
.PHONY: up down status test test-single test-cluster test-network lint schema unit clean logs

up:
	@stack/bootstrap.sh
	@$(VENV)/onceflow-stack up

# Also drops the fault library's nftables table (tests/faults/nft.py), which a killed run of the
# cluster's network scenarios can leave: its port rules would outlive the cluster.
down:
	@if [ -x $(VENV)/onceflow-stack ]; then $(VENV)/onceflow-stack down; fi
	@nft=$$(command -v nft || echo /usr/sbin/nft); if [ "$$(id -u)" -eq 0 ] && [ -x "$$nft" ]; then \
	  printf 'add table inet onceflow_faults\ndelete table inet onceflow_faults\n' | "$$nft" -f - || true; fi

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

# The single-topology suite, then the cluster's (tests/cluster skips itself on single).
test: test-single test-cluster

test-single: up lint schema
	$(VENV)/pytest -q -p no:cacheprovider --durations=15 --ignore=tests/cluster

# The least-privilege replays that hold for any topology (docs/security.md): the cluster runs
# them too, against its three brokers, two Connect workers and every program's environment.
ANY_TOPOLOGY = tests/integration/stack/test_secrets.py tests/integration/stack/test_kafka_live.py \
	tests/integration/stack/test_connect_auth.py

# Stops whatever runs, brings the cluster up, runs CLUSTER_TESTS on it, and stops it again
# (also when its start or a test failed, so the next `make up` finds nothing running). The
# cluster's tests include the network-fault scenarios (issue 26; nftables: run as root).
CLUSTER_TESTS = tests/cluster $(ANY_TOPOLOGY)
test-cluster:
	@$(MAKE) --no-print-directory down
	@export ONCEFLOW_TOPOLOGY=cluster; status=0; \
	  { $(MAKE) --no-print-directory up && \
	    $(VENV)/pytest -q -p no:cacheprovider --durations=8 $(CLUSTER_TESTS); } || status=$$?; \
	  $(MAKE) --no-print-directory down; exit $$status

# The network-fault scenarios alone, on a cluster of their own (to rehearse them again).
test-network:
	@$(MAKE) --no-print-directory test-cluster CLUSTER_TESTS="-s tests/cluster/test_network_faults.py"

clean: down
	rm -rf .stack
