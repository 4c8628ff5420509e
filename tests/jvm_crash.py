"""Where a JVM that a test starts writes its crash report, and the check that makes a crash
the test's failure.

A JVM that crashes (a fault in native code: the JVM source's library, a JNI call) writes
``hs_err_pid<pid>.log`` into its working directory unless ``-XX:ErrorFile`` names another
place; a test run from the repository would leave it there. Every JVM the tests start is
pointed at a temporary directory instead: in-process Spark sessions through
``spark.driver.extraJavaOptions`` and ``spark.executor.extraJavaOptions``
(:func:`spark_conf`), subprocesses (a job script, ``spark-submit``) through
``JAVA_TOOL_OPTIONS``, which every JVM they start reads (:func:`env`). :func:`check` then fails
the test with the report's first lines.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pytest

#: The report's name (``%p``: the JVM's process id), as the JVM names it by default.
REPORT = "hs_err_pid%p.log"


def java_option(directory: Path) -> str:
    """The JVM option that puts a crash report into ``directory``."""
    return f"-XX:ErrorFile={Path(directory) / REPORT}"


def spark_conf(directory: Path) -> dict[str, str]:
    """A Spark session's settings that put its driver's and executors' reports into
    ``directory`` (the driver's takes effect when the session starts its JVM)."""
    option = java_option(directory)
    return {"spark.driver.extraJavaOptions": option, "spark.executor.extraJavaOptions": option}


def env(directory: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with ``JAVA_TOOL_OPTIONS`` putting the
    reports of every JVM a subprocess starts into ``directory``."""
    out = dict(os.environ if base is None else base)
    given = out.get("JAVA_TOOL_OPTIONS", "")
    out["JAVA_TOOL_OPTIONS"] = f"{given} {java_option(directory)}".strip()
    return out


def new_dir(prefix: str = "kafkalog-jvm-") -> Path:
    """A fresh temporary directory for one JVM run's reports."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def reports(directory: Path) -> list[Path]:
    """The crash reports in ``directory``."""
    return sorted(Path(directory).glob("hs_err_pid*.log"))


def check(directory: Path, lines: int = 12) -> None:
    """Fails the test when a JVM left a crash report in ``directory``, with its first lines."""
    found = reports(directory)
    if not found:
        return
    head = found[0].read_text(errors="replace").splitlines()[:lines]
    pytest.fail(
        f"a JVM crashed ({len(found)} report(s) in {directory}); {found[0].name} begins:\n"
        + "\n".join(head),
        pytrace=False,
    )
