"""Builds the JVM Spark source's jar (``docs/spark-jvm.md``, "Building"): the one recipe that
``make jar``, the PEP 517 backend (``pip install .``, a wheel built from the sdist) and every
job of ``.github/workflows/wheels.yml`` run.

The jar holds two things built apart:

- the Java classes (``jvm/src``), compiled by ``javac --release 17`` against Spark's jars.
  Bytecode is the same on every platform, so a job may compile them once and hand the
  directory to a build that has no JDK (``jar --classes DIR``: the manylinux containers);
- the core built with the ``jni`` feature alone into a shared library, for the platform of
  the wheel that carries the jar. It must be built where that wheel is built (the same
  container, the same glibc): ``kafkalog/native/<os>-<arch>/<library>`` as
  ``kafkalog.spark.Native`` looks it up.

Spark's jars for ``javac`` come from, in this order: ``--spark-jars DIR``, the environment
variable ``KAFKALOG_SPARK_JARS`` (a directory of jars), ``$SPARK_HOME/jars``, or the ``pyspark``
package importable by the Python running this (the PEP 517 backend asks for it as a build
requirement when it compiles the classes).

Standard library only: it runs in isolated build environments and in manylinux containers.

    python jvm/packaging/build_jar.py classes                 # javac only
    python jvm/packaging/build_jar.py jar [--profile ci]      # the native library, the jar
    python jvm/packaging/build_jar.py check WHEEL             # the wheel carries a jar for here
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "jvm" / "src"
RESOURCES = ROOT / "jvm" / "resources"
#: Where the jar goes: inside the Python package, which the wheel includes (pyproject.toml).
JAR = ROOT / "python" / "kafkalog" / "spark" / "jars" / "kafkalog-spark.jar"
#: The jar inside an installed wheel.
WHEEL_JAR = "kafkalog/spark/jars/kafkalog-spark.jar"
JAVA_RELEASE = "17"
#: A fixed time for the jar's entries: the same inputs give the same jar.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class BuildError(Exception):
    """A step that cannot be done here, with what to do about it."""


def log(message: str) -> None:
    print(f"kafkalog jar: {message}", file=sys.stderr, flush=True)


def javac() -> str | None:
    """The JDK's compiler: ``$JAVA_HOME/bin/javac``, else on ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    if home:
        for name in ("javac", "javac.exe"):
            candidate = Path(home) / "bin" / name
            if candidate.is_file():
                return str(candidate)
    return shutil.which("javac")


def spark_jars(given: str | None = None) -> Path | None:
    """The directory of Spark's jars to compile against, or None where none is found."""
    for candidate in (
        given,
        os.environ.get("KAFKALOG_SPARK_JARS"),
        os.path.join(os.environ["SPARK_HOME"], "jars") if os.environ.get("SPARK_HOME") else None,
    ):
        if candidate:
            path = Path(candidate)
            if not any(path.glob("spark-sql_*.jar")):
                raise BuildError(f"{path} has no spark-sql jar: not a directory of Spark's jars")
            return path
    try:
        import pyspark  # noqa: PLC0415  (optional: only to find its jars)
    except ImportError:
        return None
    path = Path(pyspark.__file__).resolve().parent / "jars"
    return path if any(path.glob("spark-sql_*.jar")) else None


def compile_classes(out: Path, jars: str | None = None) -> Path:
    """The Java classes and resources compiled into ``out`` (emptied first)."""
    compiler = javac()
    if compiler is None:
        raise BuildError(
            "no JDK: javac is neither in $JAVA_HOME/bin nor on PATH (install a JDK 17 or "
            "newer, e.g. Temurin, or set JAVA_HOME)"
        )
    found = spark_jars(jars)
    if found is None:
        raise BuildError(
            "javac needs Spark's jars: install pyspark>=4.0 in this Python, or set "
            "KAFKALOG_SPARK_JARS (or SPARK_HOME) to a Spark distribution's jars"
        )
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    sources = sorted(str(p) for p in SOURCES.rglob("*.java"))
    log(f"javac {len(sources)} sources against {found}")
    # One argument file: Windows' command line is short.
    argfile = out.parent / "javac-sources.txt"
    argfile.write_text("\n".join(f'"{s}"'.replace("\\", "/") for s in sources) + "\n")
    run(
        [
            compiler,
            "--release",
            JAVA_RELEASE,
            "-Xlint:all",
            "-Xlint:-serial",
            "-Xlint:-path",
            "-Werror",
            "-encoding",
            "UTF-8",
            "-d",
            str(out),
            "-cp",
            str(found / "*"),
            f"@{argfile}",
        ]
    )
    shutil.copytree(RESOURCES, out, dirs_exist_ok=True)
    return out


def run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise BuildError(f"{command[0]} failed (exit status {done.returncode})")
    return done  # type: ignore[no-any-return]


def platform_of(target: str | None = None) -> str:
    """``<os>-<arch>`` as ``kafkalog.spark.Native.platform()`` names it in a JVM: of a Rust
    target triple, or of this machine."""
    if target:
        arch = target.split("-")[0]
        os_name = (
            "linux"
            if "linux" in target
            else "macos"
            if "darwin" in target
            else "windows"
            if "windows" in target
            else target
        )
    else:
        arch = platform.machine().lower()
        os_name = {"darwin": "macos"}.get(platform.system().lower(), platform.system().lower())
    arch = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    return f"{os_name}-{arch}"


def library_name(platform_name: str) -> str:
    """The native library's name in the jar (``kafkalog.spark.Native.libraryName()``)."""
    if platform_name.startswith("macos"):
        return "libkafkalog_jni.dylib"
    if platform_name.startswith("windows"):
        return "kafkalog_jni.dll"
    return "libkafkalog_jni.so"


def build_native(profile: str, target: str | None = None) -> Path:
    """The core built with the ``jni`` feature alone (the Python extension cannot be loaded in
    a JVM: an abi3 extension leaves libpython's symbols to the process that loads it); the
    path of the shared library cargo made."""
    cargo = shutil.which("cargo")
    if cargo is None:
        raise BuildError("cargo is not on PATH (install Rust: https://rustup.rs)")
    command = [
        cargo,
        "build",
        "--profile",
        profile,
        "--lib",
        # Not mimalloc (a default feature): a JVM loads the library after its threads exist,
        # and mimalloc's initial-exec thread-locals then crash JVM threads (SIGSEGV in a
        # streaming query's thread, tests/test_spark_jvm_write.py); the JVM's process keeps
        # the system allocator.
        "--no-default-features",
        "--features",
        "jni,object-store",
        "--message-format",
        "json-render-diagnostics",
        "--manifest-path",
        str(ROOT / "Cargo.toml"),
    ]
    if target:
        command += ["--target", target]
    log(" ".join(["cargo", *command[1:8]]) + (f" --target {target}" if target else ""))
    done = run(command, stdout=subprocess.PIPE)
    library = None
    for line in done.stdout.splitlines():
        message = json.loads(line) if line.startswith("{") else {}
        if message.get("reason") != "compiler-artifact":
            continue
        if message["target"]["name"] != "kafkalog" or "cdylib" not in message["target"]["kind"]:
            continue
        for name in message["filenames"]:
            if name.endswith((".so", ".dylib", ".dll")):
                library = Path(name)
    if library is None:
        raise BuildError("cargo built no shared library for kafkalog")
    return library


def pack(classes: Path, library: Path, platform_name: str, out: Path) -> Path:
    """The classes and the native library as one jar, written whole then renamed."""
    if not (classes / "META-INF" / "services").is_dir():
        raise BuildError(f"{classes} holds no compiled kafkalog classes")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(staging, "w", zipfile.ZIP_DEFLATED) as jar:
        manifest = zipfile.ZipInfo("META-INF/MANIFEST.MF", ZIP_TIME)
        jar.writestr(manifest, "Manifest-Version: 1.0\r\nCreated-By: kafkalog\r\n\r\n")
        for path in sorted(classes.rglob("*")):
            name = path.relative_to(classes).as_posix()
            if path.is_file() and name != "META-INF/MANIFEST.MF":
                info = zipfile.ZipInfo(name, ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                jar.writestr(info, path.read_bytes())
        entry = zipfile.ZipInfo(
            f"kafkalog/native/{platform_name}/{library_name(platform_name)}", ZIP_TIME
        )
        entry.compress_type = zipfile.ZIP_DEFLATED
        jar.writestr(entry, library.read_bytes())
    os.replace(staging, out)
    log(f"{out} ({platform_name}, {out.stat().st_size >> 20} MiB)")
    return out


def build(
    profile: str = "release",
    target: str | None = None,
    classes: Path | None = None,
    jars: str | None = None,
    out: Path = JAR,
) -> Path:
    """The whole jar: classes (compiled unless given), the native library, packed."""
    if classes is None:
        classes = compile_classes(ROOT / "target" / "jvm" / "classes", jars)
    library = build_native(profile, target)
    return pack(classes, library, platform_of(target), out)


def check_wheel(wheel: Path, platform_name: str | None = None) -> str:
    """That ``wheel`` carries the jar, with a native library for ``platform_name`` (this
    machine's by default) and the source's classes; the library's entry name."""
    platform_name = platform_name or platform_of()
    with zipfile.ZipFile(wheel) as whl:
        if WHEEL_JAR not in whl.namelist():
            raise BuildError(f"{wheel} has no {WHEEL_JAR}")
        inner = zipfile.ZipFile(io.BytesIO(whl.read(WHEEL_JAR)))
    names = set(inner.namelist())
    library = f"kafkalog/native/{platform_name}/{library_name(platform_name)}"
    for needed in (
        library,
        "kafkalog/spark/DefaultSource.class",
        "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister",
    ):
        if needed not in names:
            natives = sorted(n for n in names if n.startswith("kafkalog/native/"))
            raise BuildError(f"{wheel}'s jar has no {needed} (native libraries: {natives})")
    return library


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    classes = commands.add_parser("classes", help="compile the Java classes only")
    classes.add_argument("--out", type=Path, default=ROOT / "target" / "jvm" / "classes")
    classes.add_argument("--spark-jars", help="a directory of Spark's jars")
    jar = commands.add_parser("jar", help="build the native library and the jar")
    jar.add_argument("--profile", default="release", help="cargo profile (default release)")
    jar.add_argument("--target", help="a Rust target triple (default: this machine)")
    jar.add_argument("--classes", type=Path, help="classes compiled before (no javac here)")
    jar.add_argument("--spark-jars", help="a directory of Spark's jars")
    jar.add_argument("--out", type=Path, default=JAR)
    check = commands.add_parser("check", help="check that a wheel carries the jar")
    check.add_argument("wheel", type=Path)
    check.add_argument("--platform", help="<os>-<arch> (default: this machine's)")
    args = parser.parse_args(argv)
    try:
        if args.command == "classes":
            compile_classes(args.out, args.spark_jars)
        elif args.command == "jar":
            build(args.profile, args.target, args.classes, args.spark_jars, args.out)
        else:
            print(check_wheel(args.wheel, args.platform))
    except BuildError as e:
        log(str(e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
