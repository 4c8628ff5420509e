"""The PEP 517 backend (jvm/packaging/kafkalog_backend.py) and the jar's recipe
(jvm/packaging/build_jar.py): what a build asks for and does with and without a JDK, the
platform names the JVM looks the native library up by, and the wheel check. The builds
themselves run in `make test` (the wheel), `make test-wheel` (the sdist) and wheels.yml."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

PACKAGING = Path(__file__).resolve().parent.parent / "jvm" / "packaging"
sys.path.insert(0, str(PACKAGING))

import build_jar  # noqa: E402
import kafkalog_backend  # noqa: E402


@pytest.fixture
def no_jdk(monkeypatch, tmp_path):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert build_jar.javac() is None


@pytest.fixture
def jdk(monkeypatch, tmp_path):
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "javac").write_text("")
    monkeypatch.setenv("JAVA_HOME", str(home))
    for name in ("KAFKALOG_SPARK_JARS", "SPARK_HOME", "KAFKALOG_JAR"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_a_jdk_asks_for_pyspark_as_a_build_requirement(jdk, monkeypatch, tmp_path):
    assert build_jar.javac() == str(jdk / "bin" / "javac")
    assert kafkalog_backend.PYSPARK in kafkalog_backend.get_requires_for_build_wheel()
    assert kafkalog_backend.PYSPARK in kafkalog_backend.get_requires_for_build_editable()
    # Spark's jars named another way: no pyspark needed.
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert kafkalog_backend.PYSPARK not in kafkalog_backend.get_requires_for_build_wheel()
    monkeypatch.delenv("SPARK_HOME")
    monkeypatch.setenv("KAFKALOG_JAR", "skip")
    assert kafkalog_backend.PYSPARK not in kafkalog_backend.get_requires_for_build_wheel()


def test_no_jdk_builds_without_the_jar_and_says_how(no_jdk, monkeypatch, capsys):
    monkeypatch.delenv("KAFKALOG_JAR", raising=False)
    assert kafkalog_backend.PYSPARK not in kafkalog_backend.get_requires_for_build_wheel()
    kafkalog_backend._jar(None)  # nothing built, no failure
    said = capsys.readouterr().err
    assert "no JDK found" in said and "install a JDK 17 or newer" in said
    monkeypatch.setenv("KAFKALOG_JAR", "required")
    with pytest.raises(SystemExit, match="no JDK found.*KAFKALOG_JAR=required"):
        kafkalog_backend._jar(None)
    monkeypatch.setenv("KAFKALOG_JAR", "sometimes")
    with pytest.raises(SystemExit, match="auto, required or skip"):
        kafkalog_backend._jar(None)


def test_the_native_library_is_built_as_maturin_builds(monkeypatch):
    monkeypatch.setenv("MATURIN_PEP517_ARGS", "--profile ci --target aarch64-apple-darwin")
    assert kafkalog_backend._cargo_args(None) == ("ci", "aarch64-apple-darwin")
    monkeypatch.setenv("MATURIN_PEP517_ARGS", "")
    assert kafkalog_backend._cargo_args(None) == ("release", None)
    assert kafkalog_backend._cargo_args({"maturin.build-args": "--profile=demo"}) == (
        "demo",
        None,
    )


@pytest.mark.parametrize(
    ("target", "platform", "library"),
    [
        ("x86_64-unknown-linux-gnu", "linux-x86_64", "libkafkalog_jni.so"),
        ("aarch64-unknown-linux-gnu", "linux-aarch64", "libkafkalog_jni.so"),
        ("aarch64-apple-darwin", "macos-aarch64", "libkafkalog_jni.dylib"),
        ("x86_64-apple-darwin", "macos-x86_64", "libkafkalog_jni.dylib"),
        ("x86_64-pc-windows-msvc", "windows-x86_64", "kafkalog_jni.dll"),
    ],
)
def test_platform_names_are_the_jvms(target, platform, library):
    """As kafkalog.spark.Native.platform() and libraryName() name them (jvm/src)."""
    assert build_jar.platform_of(target) == platform
    assert build_jar.library_name(platform) == library
    native = (build_jar.SOURCES / "kafkalog" / "spark" / "Native.java").read_text()
    assert f'"{library}"' in native
    assert f'os = "{platform.split("-")[0]}"' in native


def test_the_wheel_check_wants_this_platforms_library(tmp_path):
    def wheel(entries: list[str]) -> Path:
        jar = tmp_path / "inner.jar"
        with zipfile.ZipFile(jar, "w") as z:
            for e in entries:
                z.writestr(e, b"x")
        path = tmp_path / "k.whl"
        with zipfile.ZipFile(path, "w") as z:
            z.write(jar, build_jar.WHEEL_JAR)
        return path

    classes = [
        "kafkalog/spark/DefaultSource.class",
        "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister",
    ]
    good = wheel([*classes, "kafkalog/native/linux-x86_64/libkafkalog_jni.so"])
    assert build_jar.check_wheel(good, "linux-x86_64").endswith("libkafkalog_jni.so")
    with pytest.raises(build_jar.BuildError, match="linux-aarch64"):
        build_jar.check_wheel(good, "linux-aarch64")
    with pytest.raises(build_jar.BuildError, match="DefaultSource"):
        build_jar.check_wheel(
            wheel(["kafkalog/native/linux-x86_64/libkafkalog_jni.so"]), "linux-x86_64"
        )
    empty = tmp_path / "none.whl"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("kafkalog/__init__.py", "")
    with pytest.raises(build_jar.BuildError, match="has no kafkalog/spark/jars"):
        build_jar.check_wheel(empty)
