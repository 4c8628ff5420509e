"""kafkalog's PEP 517 build backend (``pyproject.toml``'s ``build-backend``, found through
``backend-path``): maturin's, with the JVM Spark source's jar built first, so that
``pip install .`` from a checkout, and a wheel built from the sdist, carry the jar as the
wheels of ``.github/workflows/wheels.yml`` do. maturin has no hook for a step of its own.

Where a JDK is found (``$JAVA_HOME/bin/javac`` or ``javac`` on ``PATH``) the jar is built with
``build_jar.py``: the Java classes compiled against Spark's jars, which the isolated build
environment gets by asking for ``pyspark`` as a build requirement (unless
``KAFKALOG_SPARK_JARS`` or ``SPARK_HOME`` names a directory of them), and the core built a
second time with the ``jni`` feature, with the cargo profile (and target) of
``MATURIN_PEP517_ARGS``, release by default. Where there is no JDK the wheel is built without
the jar and the build says so; ``kafkalog.spark.jar()`` then says how to get it.

``KAFKALOG_JAR``: ``auto`` (the default, as above), ``required`` (no JDK fails the build: CI
and release builds), or ``skip`` (no jar; Python data source only).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

import maturin
from maturin import (  # noqa: F401  (the rest of the interface is maturin's own)
    build_sdist,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_wheel,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_jar  # noqa: E402

#: The Spark the classes compile against (the runtime's API: Spark 4).
PYSPARK = "pyspark>=4.0,<5"


def _mode() -> str:
    mode = os.environ.get("KAFKALOG_JAR", "auto").strip().lower() or "auto"
    if mode not in ("auto", "required", "skip"):
        raise SystemExit(f"kafkalog jar: KAFKALOG_JAR is auto, required or skip, not {mode!r}")
    return mode


def _needs_pyspark() -> bool:
    """Whether the build environment needs pyspark for Spark's jars."""
    if _mode() == "skip" or build_jar.javac() is None:
        return False
    return not (os.environ.get("KAFKALOG_SPARK_JARS") or os.environ.get("SPARK_HOME"))


def _cargo_args(config_settings: Mapping[str, Any] | None) -> tuple[str, str | None]:
    """The cargo profile and target maturin builds with (``MATURIN_PEP517_ARGS`` or the
    ``maturin.build-args`` config setting): the jar's library is built the same way."""
    args = maturin.get_maturin_pep517_args(config_settings)
    profile, target = "release", None
    for i, arg in enumerate(args):
        value = args[i + 1] if i + 1 < len(args) else None
        if arg == "--profile" and value:
            profile = value
        elif arg.startswith("--profile="):
            profile = arg.split("=", 1)[1]
        elif arg == "--target" and value:
            target = value
        elif arg.startswith("--target="):
            target = arg.split("=", 1)[1]
        elif arg in ("--debug", "--dev"):
            profile = "dev"
    return profile, target


def _jar(config_settings: Mapping[str, Any] | None) -> None:
    try:
        _build_jar(config_settings)
    except build_jar.BuildError as e:
        raise SystemExit(f"kafkalog jar: {e}") from None


def _build_jar(config_settings: Mapping[str, Any] | None) -> None:
    mode = _mode()
    if mode == "skip":
        build_jar.log("KAFKALOG_JAR=skip: building without the JVM Spark source's jar")
        return
    if build_jar.javac() is None:
        how = (
            "no JDK found (javac in $JAVA_HOME/bin or on PATH): this wheel has no JVM Spark "
            "source, and format('kafkalog') in Spark is the Python data source. To build the "
            "jar, install a JDK 17 or newer and reinstall; KAFKALOG_JAR=skip silences this."
        )
        if mode == "required":
            raise build_jar.BuildError(how.split(":")[0] + " and KAFKALOG_JAR=required")
        build_jar.log(how)
        if build_jar.JAR.exists():
            build_jar.log(f"{build_jar.JAR} (built before) is included as it is")
        return
    profile, target = _cargo_args(config_settings)
    env = maturin._get_env() if hasattr(maturin, "_get_env") else None  # Rust, where missing
    old = dict(os.environ)
    try:
        if env:
            os.environ.update(env)
        build_jar.build(profile=profile, target=target)
    finally:
        os.environ.clear()
        os.environ.update(old)


def get_requires_for_build_wheel(config_settings: Mapping[str, Any] | None = None) -> list[str]:
    requires = list(maturin.get_requires_for_build_wheel(config_settings))
    return requires + [PYSPARK] if _needs_pyspark() else requires


def get_requires_for_build_editable(
    config_settings: Mapping[str, Any] | None = None,
) -> list[str]:
    return get_requires_for_build_wheel(config_settings)


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    _jar(config_settings)
    return str(maturin.build_wheel(wheel_directory, config_settings, metadata_directory))


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    _jar(config_settings)
    return str(maturin.build_editable(wheel_directory, config_settings, metadata_directory))


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: Mapping[str, Any] | None = None
) -> str:
    return str(maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings))


__all__ = [
    "build_editable",
    "build_sdist",
    "build_wheel",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "prepare_metadata_for_build_wheel",
]
