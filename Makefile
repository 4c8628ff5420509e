# Developer commands. `make demo` and `make test` are the README's two commands; both set
# everything up themselves on a fresh machine (a virtualenv in .venv, the Rust crates, the
# Python packages), so they also serve CI (.ci/run runs `make test`).

VENV ?= .venv
BIN := $(VENV)/bin
# Tests build with the `ci` profile: optimised, without fat LTO's minutes on two cores.
PROFILE ?= ci

.PHONY: jar demo develop install-wheel test test-rust test-python test-wheel lint docs fmt bench fuzz fuzz-smoke clean

$(BIN)/maturin:
	python3 -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q 'maturin>=1.9,<2'

# Build the extension into the virtualenv (editable), with the test and dev extras.
develop: $(BIN)/maturin
	$(BIN)/maturin develop -q --profile $(PROFILE) --extras test,dev

# A Spark job (local mode) on the sample log directory: every format and compression.
# Installs the package with its `spark` extra only (not test,dev), PySpark downloading while
# the extension compiles with the `demo` profile (not optimised: the quickest build, see
# Cargo.toml). pip's and cargo's lines go to $(DEMO_LOG); a line per 50 crates compiled shows
# progress. The jar of the JVM Spark source (`make jar`, same profile: only the core and the
# jni crate compile again) goes into the installed package, and the job's session uses it.
# (`make`, not `$$(MAKE)`: `make -n demo` prints the step rather than running it.)
DEMO_PROFILE ?= demo
DEMO_WHEEL_DIR := target/demo-wheel
DEMO_LOG := $(VENV)/demo-setup.log
demo: $(BIN)/maturin
	@echo "make demo: setting up $(VENV) (the first time takes a few minutes; details in $(DEMO_LOG))"
	@: > $(DEMO_LOG)
	@$(BIN)/python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
	  print(chr(10).join(p['dependencies'] + p['optional-dependencies']['spark']))" \
	  > $(VENV)/demo-requirements.txt
	@echo "  installing PySpark (kafkalog's spark extra) while the extension compiles"
	@rm -rf $(DEMO_WHEEL_DIR); \
	$(BIN)/pip install -q --disable-pip-version-check -r $(VENV)/demo-requirements.txt \
	  > $(VENV)/demo-pip.log 2>&1 & pip=$$!; \
	{ $(BIN)/maturin build --profile $(DEMO_PROFILE) --out $(DEMO_WHEEL_DIR) 2>&1; \
	  echo $$? > $(VENV)/demo-build.rc; } | tee -a $(DEMO_LOG) \
	  | { n=0; while IFS= read -r line; do case "$$line" in *Compiling*) n=$$((n + 1)); \
	      [ $$((n % 50)) -ne 0 ] || echo "  compiling: $$n crates done";; esac; done; }; \
	wait $$pip; rc=$$?; cat $(VENV)/demo-pip.log >> $(DEMO_LOG); \
	if [ "$$rc" != 0 ]; then echo "pip failed:"; tail -20 $(VENV)/demo-pip.log; exit 1; fi; \
	if [ "$$(cat $(VENV)/demo-build.rc)" != 0 ]; then echo "the build failed:"; \
	  tail -30 $(DEMO_LOG); exit 1; fi
	@echo "  PySpark installed, extension built; installing the wheel"
	@$(BIN)/pip install -q --disable-pip-version-check --force-reinstall --no-deps \
	  $(DEMO_WHEEL_DIR)/*.whl >> $(DEMO_LOG) 2>&1 || { tail -20 $(DEMO_LOG); exit 1; }
	@echo "  building the JVM Spark source's jar"
	@make -s jar PROFILE=$(DEMO_PROFILE) VENV=$(VENV) >> $(DEMO_LOG) 2>&1 || { tail -20 $(DEMO_LOG); exit 1; }
	@d="$$($(BIN)/python -c 'import kafkalog.spark, os; print(os.path.dirname(kafkalog.spark.__file__))')/jars"; \
	  mkdir -p "$$d" && cp $(JAR) "$$d/"
	@echo "  ready; running examples/spark_job.py examples/logs"
	@PYSPARK_PYTHON=$(abspath $(BIN))/python $(BIN)/python examples/spark_job.py examples/logs
	@echo ""
	@echo "Next: kafkalog, its command line and PySpark are installed in $(VENV):"
	@echo "  source $(VENV)/bin/activate"
	@echo "  kafkalog --help"
	@echo "  kafkalog info examples/logs"
	@echo "  kafkalog convert examples/logs/payments-0 - --value-format avro --schemas examples/logs"
	@echo "  python examples/read_logs.py examples/logs"
	@echo "This build is not optimised (the quickest to compile): pip install . builds the fast one."
	@echo "docs/getting-started.md goes on from here."

# The Spark connector inside the JVM (jvm/, rust/jni/, docs/spark-jvm.md): the core built
# with the `jni` feature alone into the native library (the Python extension cannot be loaded
# in a JVM), the Java classes compiled with javac against the jars PySpark ships (installed
# first if missing), both in one jar inside the Python package (kafkalog.spark.jar()). The
# recipe is jvm/packaging/build_jar.py, which the PEP 517 backend (pip install .) and every job
# of .github/workflows/wheels.yml run too.
JAR := python/kafkalog/spark/jars/kafkalog-spark.jar
BUILD_JAR := jvm/packaging/build_jar.py
jar: $(BIN)/maturin
	$(BIN)/python -c "import pyspark" 2>/dev/null || $(BIN)/pip install -q 'pyspark[sql]>=4.0'
	$(BIN)/python $(BUILD_JAR) jar --profile $(PROFILE)

# The Python suite runs against the package as a wheel installs it (not python/'s sources):
# what users get, with its included files and entry points.
test: install-wheel test-rust test-python lint docs fuzz-smoke

# The wheel built as .github/workflows/wheels.yml builds one (the jar's classes, the jar with
# this machine's native library, then maturin; no `make jar`), with the same profile as
# `develop` (no second compile), checked to carry the jar, and installed into the virtualenv
# in place of the editable install, with the test and dev extras; `make develop` goes back to
# the editable install. tests/test_wheel_jvm.py installs the same wheel alone into a fresh
# virtualenv and runs the JVM source from it (KAFKALOG_TEST_WHEEL).
CI_WHEEL_DIR := target/ci-wheel
install-wheel: $(BIN)/maturin
	$(BIN)/python -c "import pyspark" 2>/dev/null || $(BIN)/pip install -q 'pyspark[sql]>=4.0'
	$(BIN)/python $(BUILD_JAR) classes
	$(BIN)/python $(BUILD_JAR) jar --profile $(PROFILE) --classes target/jvm/classes
	rm -rf $(CI_WHEEL_DIR)
	$(BIN)/maturin build -q --profile $(PROFILE) --out $(CI_WHEEL_DIR)
	$(BIN)/python $(BUILD_JAR) check $(CI_WHEEL_DIR)/*.whl
	$(BIN)/pip install -q "$$(ls $(CI_WHEEL_DIR)/*.whl)[test,dev]"
	$(BIN)/pip install -q --force-reinstall --no-deps $(CI_WHEEL_DIR)/*.whl
	cd $(CI_WHEEL_DIR) && $(abspath $(BIN))/python -c "import kafkalog, sys; \
	  print('testing', kafkalog.__file__); sys.exit('site-packages' not in kafkalog.__file__)"

# Temporary files (the doctests' binaries among them, which rustdoc links under TMPDIR) go
# beside the build, on the disk that has room for it, not into /tmp.
TEST_TMP := $(abspath target/tmp)
test-rust:
	mkdir -p $(TEST_TMP)
	TMPDIR=$(TEST_TMP) cargo test --all-targets --features oracles
	TMPDIR=$(TEST_TMP) cargo test --doc

test-python:
	KAFKALOG_TEST_WHEEL="$$(ls $(abspath $(CI_WHEEL_DIR))/*.whl)" $(BIN)/pytest

# The package as users get it (what .github/workflows/wheels.yml runs per target): a wheel
# and an sdist built, a wheel built from the sdist too (its PEP 517 backend building the
# jar, which it must carry), each installed in a fresh virtualenv
# with the test extra, and tests run from the checkout against the installed package (never
# python/'s sources). Not part of `make test`: it builds and installs everything again, which
# takes several minutes. WHEEL_TESTS narrows the tests run against the wheels.
WHEEL_DIR := target/wheel-test
WHEEL_TESTS ?= tests
PYTHON ?= python3

test-wheel: jar
	rm -rf $(WHEEL_DIR)
	$(BIN)/maturin build --profile $(PROFILE) --out $(WHEEL_DIR)/dist
	$(BIN)/maturin sdist --out $(WHEEL_DIR)/dist
	$(PYTHON) -m venv $(WHEEL_DIR)/venv
	$(WHEEL_DIR)/venv/bin/pip install -q "$$(ls $(WHEEL_DIR)/dist/*.whl)[test]"
	cd $(WHEEL_DIR) && venv/bin/python -c "import kafkalog, sys; print(kafkalog.__file__); \
	  sys.exit('site-packages' not in kafkalog.__file__)"
	$(WHEEL_DIR)/venv/bin/pytest -q -p no:cacheprovider $(WHEEL_TESTS)
	CARGO_TARGET_DIR=$(abspath target) MATURIN_PEP517_ARGS="--profile $(PROFILE)" \
	  KAFKALOG_JAR=required $(WHEEL_DIR)/venv/bin/pip wheel -q --no-deps \
	  -w $(WHEEL_DIR)/from-sdist $(WHEEL_DIR)/dist/*.tar.gz
	$(BIN)/python $(BUILD_JAR) check $(WHEEL_DIR)/from-sdist/*.whl
	$(WHEEL_DIR)/venv/bin/pip install -q --force-reinstall --no-deps $(WHEEL_DIR)/from-sdist/*.whl
	$(WHEEL_DIR)/venv/bin/pytest -q -p no:cacheprovider $(WHEEL_TESTS)

lint: $(BIN)/maturin
	cargo fmt --all -- --check
	cargo clippy --all-targets --features python,jni -- -D warnings
	cargo clippy --benches --features oracles -- -D warnings
	$(BIN)/ruff check python tests examples
	$(BIN)/ruff format --check python tests examples
	$(BIN)/mypy
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --features python,jni -q

# The API reference from the docstrings (mkdocs.yml), into site/; --strict fails on a broken
# reference. Needs the dev extra (make develop).
docs: $(BIN)/maturin
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q

fmt:
	cargo fmt --all
	$(BIN)/ruff format python tests examples

bench:
	cargo bench --features oracles

FUZZ_TARGETS := segment v2_batch legacy_message decompression index_files control_record \
  values avro_value protobuf_value json_value jni_request serve_request
FUZZ_SMOKE_TARGETS := $(FUZZ_TARGETS)
FUZZ_SECONDS ?= 600
# -O: optimised (fuzz/Cargo.toml: the smoke pass builds with --dev instead).
FUZZ_BUILD ?= -O

# libFuzzer over every target, seeded from tests/corpus (FUZZ_SECONDS each; crashes land in
# fuzz/artifacts, and belong in fuzz/regressions once fixed, which `cargo test` replays).
fuzz:
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	fuzz/seed.sh
	for t in $(FUZZ_TARGETS); do \
	  cargo +nightly fuzz run $$t $(FUZZ_BUILD) -- -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	    -timeout=10 -max_len=65536 || exit 1; \
	done

# A short fuzzing pass in CI, unoptimised (an optimised build alone took 8.5 of CI's minutes):
# every target over its seeds, then mutated for 10 seconds. It needs nightly Rust (cargo-fuzz
# instruments with it); where that is missing it says so and skips, as the stable `cargo test`
# replays saved inputs anyway.
fuzz-smoke:
	@if cargo +nightly --version >/dev/null 2>&1; then \
	  $(MAKE) fuzz FUZZ_SECONDS=10 FUZZ_BUILD=--dev FUZZ_TARGETS='$(FUZZ_SMOKE_TARGETS)'; \
	else \
	  echo "fuzz-smoke: no nightly Rust here; skipped (cargo test replays fuzz/regressions)"; \
	fi

clean:
	rm -rf $(VENV) target site
