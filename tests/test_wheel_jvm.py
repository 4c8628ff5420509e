"""The wheel as users get it runs the JVM Spark source: a wheel built as
``.github/workflows/wheels.yml`` builds one (``make test`` builds it and names it in
``KAFKALOG_TEST_WHEEL``), installed with its ``spark`` extra into a fresh virtualenv and nothing
else of this checkout, carries the jar with this machine's native library; ``spark-submit
--jars "$(python -c 'import kafkalog.spark; print(kafkalog.spark.jar())')"`` as
``docs/spark-jvm.md`` shows it then reads with the JVM source in ``local-cluster`` mode (two
executor processes, each loading the native library from the jar), with no Python worker
able to start, and gets the rows ``kafkalog.read`` gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import jvm_crash
import pytest

HERE = Path(__file__).resolve().parent
LOGS = HERE.parent / "examples" / "logs"
BUILD_JAR = HERE.parent / "jvm" / "packaging" / "build_jar.py"

JOB = """
import json, sys
import kafkalog, kafkalog.spark
from pyspark.sql import SparkSession

spark = SparkSession.builder.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
df = spark.read.format("kafkalog").load(sys.argv[1])
plan = df._jdf.queryExecution().executedPlan().toString()
got = sorted(tuple(r) for r in df.selectExpr("topic", "partition", "offset").collect())
t = kafkalog.read(sys.argv[1]).read_all()
want = sorted(zip(t["topic"].to_pylist(), t["partition"].to_pylist(), t["offset"].to_pylist()))
print(json.dumps({
    "plan": plan,
    "equal": [list(r) for r in got] == [list(r) for r in want],
    "rows": len(got),
    "kafkalog": kafkalog.__file__,
    "jar": kafkalog.spark.jar(),
    "master": spark.sparkContext.master,
    "executors": spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size(),
}))
spark.stop()
"""


@pytest.fixture(scope="module")
def wheel() -> Path:
    given = os.environ.get("KAFKALOG_TEST_WHEEL")
    if not given:
        pytest.skip("KAFKALOG_TEST_WHEEL names no wheel (make test builds one and sets it)")
    return Path(given)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel and its ``spark`` extra (from pip's cache where it
    has them): its ``bin`` directory."""
    root = tmp_path_factory.mktemp("wheel-venv")
    venv.create(root / "venv", with_pip=True)
    bin_dir = root / "venv" / ("Scripts" if os.name == "nt" else "bin")
    subprocess.run(
        [
            str(bin_dir / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            f"{wheel}[spark]",
        ],
        check=True,
        timeout=600,
    )
    return bin_dir


def test_the_wheel_carries_the_jar_for_this_platform(wheel):
    done = subprocess.run(
        [sys.executable, str(BUILD_JAR), "check", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("kafkalog/native/")


def test_spark_submit_with_the_installed_jar_reads_with_the_jvm_source(installed, tmp_path):
    python = str(installed / "python")
    # As in the virtualenv activated (spark-submit finds Spark's home through its python3).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYSPARK", "SPARK"))}
    env["PATH"] = f"{installed}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(installed.parent)
    # The documented command: the jar's path from the installed package.
    jar = subprocess.run(
        [python, "-c", "import kafkalog.spark; print(kafkalog.spark.jar())"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        check=True,
    ).stdout.strip()
    assert Path(jar).is_file() and str(installed.parent) in jar, jar
    job = tmp_path / "job.py"
    job.write_text(JOB)
    done = subprocess.run(
        [
            str(installed / "spark-submit"),
            "--master",
            "local-cluster[2,1,1024]",
            "--jars",
            jar,
            "--conf",
            f"spark.pyspark.driver.python={python}",
            # No Python worker can start: the read is the JVM's alone.
            "--conf",
            "spark.pyspark.python=/nonexistent/python",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.executor.memory=512m",
            str(job),
            str(LOGS),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=jvm_crash.env(tmp_path, env),
        timeout=600,
    )
    jvm_crash.check(tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["equal"] and got["rows"] > 0, got
    assert str(installed.parent) in got["kafkalog"] and got["jar"] == jar, got
    assert got["master"] == "local-cluster[2,1,1024]" and got["executors"] >= 2, got
    assert f"kafkalog {LOGS} columns=" in got["plan"], got["plan"]
    assert "Python" not in got["plan"], got["plan"]
