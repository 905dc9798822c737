# mm2gov: `make demo` and `make test` each install what they need first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALL := devstack/install
export MM2GOV_CACHE ?= $(HOME)/.cache/mm2gov
UV := $(MM2GOV_CACHE)/uv-$(shell sed -n 's/^UV_VERSION=//p' governance/versions.env)/bin/uv
export UV_PYTHON_DOWNLOADS := never

.PHONY: setup python-env components lock test test-random test-fast test-unit lint demo bench clean

setup: python-env components ## venv + Kafka/MM2 jars + opa + etcd + kube-apiserver (idempotent, cached)

# The venv is exactly uv.lock (every package pinned, with hashes); --locked refuses a lock that no longer
# satisfies pyproject.toml. Runs every time: a no-op in about a second when nothing changed.
# Bytecode is compiled here, the packages' and ours: where PYTHONDONTWRITEBYTECODE is set (as on the project's
# machines) no import writes it, and every mm2gov process compiled every module it imports again, about 1 CPU-s
# of a `validate` run's 2 (the suite starts some 300; 2026-11-27). compileall skips what is up to date.
python-env:
	bash $(INSTALL)/uv.sh >/dev/null
	$(UV) sync --quiet --locked --extra dev --python $(PYTHON) --compile-bytecode
	$(BIN)/python -m compileall -q -j 0 governance spark_audit devstack tests bench >/dev/null

lock: ## the newest releases into uv.lock and the tool pins: commit it on its own, then run `make test`
	bash $(INSTALL)/lock.sh

components:
	bash $(INSTALL)/all.sh

lint: python-env
	$(BIN)/ruff check governance spark_audit devstack tests bench
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy

# Two workers, each with its own local stack (its session fixtures); a test module stays on one worker (its
# module fixtures are set up once), the slowest modules first (SLOWEST_FIRST in tests/conftest.py; xdist's own
# reorder, which --no-loadscope-reorder turns off, would hand them out last). Measured on 2 cores from a fresh
# clone, cache warm: 14:54 for 1171 tests, 15:50 for 1226, then 14:21 for 1243 and 14:22 for 1248 once reads to
# a known end stopped waiting (2026-11-25; 29 min before issue 23), 16:10 for 1364 (session 12: the audit, failover,
# probe and migrate now run the policy; new oracle and order-independence tests); session 13: 15:12 for 1407 and
# 15:38 for 1418 (run-to-run spread about half a minute; `make test` prints a per-worker timeline with each
# module's CPU seconds, to aim the next cuts). Session 15: 15:12 for 1419 with two workers; three workers,
# with the heaviest fixtures no longer started together and brokers that start again when a chosen port was
# taken, 14:37 for 1430 (two workers' CPU use was about 68%: the third overlaps waits on JVM starts).
# Session 16: 28:35 for 1567 (issue 27's real-stack modules); session 17: 28:17 for 1633, 42.8 CPU-min, of which
# MM2 JVMs 13, Spark JVMs 14, brokers 7 (tests/conftest.py prints the timeline; the note has the split).
# Session 19: the modules that use the SparkSession on one worker (SPARK_MODULES in tests/conftest.py: one Spark
# driver, not three): 25:37 for 1634, 41.3 CPU-min (26:59 and 42.0 the run before; 32:07 and 49.3 in session 18).
# Session 22: 22:28 and 27:05 for 1650, 35.3 and 43.2 CPU-min, one tree 20 minutes apart (the machine varies).
# Session 23: 24:46, 25:16 and 26:19 for 1650-1651, 39.2-42.8 CPU-min; the note has the CPU per component.
# Session 27 (a new machine of the same kind, quiet): 15:12 for 1698, 24.6 CPU-min, with three workers; four
# workers took 15:52 and 26.2 CPU-min (a fourth stack; cores were already 80% busy), so three stay.
# Session 28: the brokers and MM2s start from class-data-sharing archives (devstack/cds.py): 14:47, 13:24 and
# 15:12 for 1709-1710, 21.3-23.8 CPU-min, once the archives exist; 15:19 and 25.0 CPU-min for the run that
# wrote them. Session 29: 13:57 for 1710 (22.1 CPU-min) and 12:58 for 1711 (20.7 CPU-min).
# PYTEST_WORKERS=N sets another.
PYTEST_WORKERS ?= 3
test: setup
	$(BIN)/ruff check governance spark_audit devstack tests bench
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder

# Order independence, as a documented check: modules in a random order and the tests of each module shuffled,
# one process (the seed is printed; pass it back with --random-order-seed=N to repeat a run)
test-random: setup
	$(BIN)/pytest --random-order-bucket=module

test-unit: python-env
	$(BIN)/pytest -m "not integration"

# Two workers (tests spread one by one): 951 unit tests in 50 s against 91 s in one process (2026-11-25).
test-fast: python-env ## the inner loop: lint and the unit tests that need no JVM
	$(BIN)/ruff check governance spark_audit devstack tests bench
	$(BIN)/lint-imports --no-logo
	$(BIN)/mypy
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) -m "not integration and not spark"

demo: setup
	$(BIN)/mm2gov demo

bench: setup
	$(BIN)/python bench/devstack.py
	$(BIN)/python bench/replication.py
	$(BIN)/python bench/migration.py
	$(BIN)/python bench/replication_slo.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache
