# mm2gov: `make demo` and `make test` each install what they need first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALL := governance/devstack/install
export MM2GOV_CACHE ?= $(HOME)/.cache/mm2gov

.PHONY: setup python-env components test test-unit lint demo bench clean

setup: python-env components ## venv + Kafka/MM2 jars + opa + etcd + kube-apiserver (idempotent, cached)

python-env: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/pip install -q -e '.[dev]'
	touch $@

components:
	bash $(INSTALL)/all.sh

lint: python-env
	$(BIN)/ruff check governance spark_audit tests bench
	$(BIN)/lint-imports --no-logo

test: setup
	$(BIN)/ruff check governance spark_audit tests bench
	$(BIN)/lint-imports --no-logo
	$(BIN)/pytest

test-unit: python-env
	$(BIN)/pytest -m "not integration"

demo: setup
	$(BIN)/mm2gov demo

bench: setup
	$(BIN)/python bench/devstack.py
	$(BIN)/python bench/replication.py
	$(BIN)/python bench/migration.py
	$(BIN)/python bench/replication_slo.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache
