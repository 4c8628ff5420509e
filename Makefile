# Developer commands. `make demo` and `make test` are the README's two commands; both set
# everything up themselves on a fresh machine (a virtualenv in .venv, the Rust crates, the
# Python packages), so they also serve CI (.ci/run runs `make test`).

VENV ?= .venv
BIN := $(VENV)/bin
# Tests build with the `ci` profile: optimised, without fat LTO's minutes on two cores.
PROFILE ?= ci

.PHONY: demo develop test test-rust test-python lint fmt bench clean

$(BIN)/maturin:
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q 'maturin>=1.9,<2'

# Build the extension into the virtualenv (editable), with the test and dev extras.
develop: $(BIN)/maturin
	$(BIN)/maturin develop -q --profile $(PROFILE) --extras test,dev

# A Spark job (local mode) on the sample log directory: every format and compression.
demo: develop
	PYSPARK_PYTHON=$(abspath $(BIN))/python $(BIN)/python examples/spark_job.py examples/logs

test: develop test-rust test-python lint

test-rust:
	cargo test --all-targets

test-python:
	$(BIN)/pytest

lint: $(BIN)/maturin
	cargo fmt --all -- --check
	cargo clippy --all-targets --features python -- -D warnings
	$(BIN)/ruff check python tests examples
	$(BIN)/ruff format --check python tests examples

fmt:
	cargo fmt --all
	$(BIN)/ruff format python tests examples

bench:
	cargo bench

clean:
	rm -rf $(VENV) target
