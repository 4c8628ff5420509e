"""The ``kafkalog`` data source inside the JVM: a Spark DataSource V2 written in Java over the
same Rust core (``jvm/``, ``rust/jni/``), shipped in this package as one jar that carries its
native library.

With the jar on a session's classpath, ``spark.read.format("kafkalog")`` is the JVM source:
Spark looks a short name up among the JVM's data sources first and asks for a Python data
source only when none has it. Without the jar, the same name is the Python data source
(:mod:`kafkalog.spark.source`). Both take the same options and give the same rows; the JVM
source hands Spark columnar batches over the buffers the core decoded into (no Python worker,
no per-row conversion), decodes only the columns a query uses, and plans ``topic``,
``partition``, ``offset`` and ``timestamp`` predicates through the indexes. See
``docs/spark-jvm.md``.

Starting a session with it::

    spark = kafkalog.spark.jvm.session()              # local[*]
    spark = kafkalog.spark.jvm.session(SparkSession.builder.master("yarn"))

or by hand: ``.config("spark.jars", kafkalog.spark.jar())``; Scala and Java jobs pass the
same jar with ``--jars``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafkalog.errors import KafkaLogError

__all__ = ["JAR_NAME", "jar", "session", "in_session"]

#: The jar's file name inside the package.
JAR_NAME = "kafkalog-spark.jar"
#: The JVM data source's class (registered under the short name ``kafkalog``).
SOURCE_CLASS = "kafkalog.spark.DefaultSource"


def jar() -> str:
    """The path of the kafkalog Spark connector's jar (Java classes and the native library for
    this platform), to pass as ``spark.jars`` or ``--jars``."""
    path = Path(__file__).resolve().parent / "jars" / JAR_NAME
    if not path.is_file():
        raise KafkaLogError(
            f"the kafkalog Spark jar is not in this installation ({path}): this kafkalog was "
            "built without a JDK. The wheels on PyPI carry it; `pip install .` builds it where "
            "a JDK 17 or newer is found (javac on PATH or in $JAVA_HOME/bin): install one and "
            "reinstall; in a source checkout, `make jar` builds it"
        )
    return str(path)


def session(builder: Any = None, **config: str) -> Any:
    """A Spark session with the JVM data source on its classpath (``local[*]`` unless
    ``builder`` says otherwise), with ``config`` set on it. An existing session is returned
    as it is, so the jar must be given before the first session of a process starts."""
    if builder is None:
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master("local[*]")
    builder = builder.config("spark.jars", jar())
    for key, value in config.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def in_session(spark: Any) -> bool:
    """Whether ``spark``'s JVM has the JVM data source (then ``format("kafkalog")`` is it)."""
    try:
        jvm = spark.sparkContext._jvm
        loader = jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader()
        jvm.java.lang.Class.forName(SOURCE_CLASS, False, loader)
        return True
    except Exception:  # py4j's error for a class that is not there
        return False
