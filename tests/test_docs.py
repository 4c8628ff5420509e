"""The getting-started page (docs/getting-started.md) runs as written: its ```python blocks
in order, in one namespace, and the `kafkalog ...` lines of its ```sh blocks through the
command line's entry point, against the sample logs and a local S3 server."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import kafkalog.cli

ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "getting-started.md"
LOGS = ROOT / "examples" / "logs"
# The page's relative paths: the sample logs, and what it writes (here, into a temporary
# directory; Spark resolves relative paths against the JVM's directory, not Python's).
WRITTEN = ("kafka-logs.parquet", "restored-logs")


def _blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w+)\n(.*?)^```", text, re.S | re.M)


def test_getting_started_runs_as_written(spark, s3, tmp_path, monkeypatch):
    page = PAGE.read_text()
    assert "getting-started.md" in (ROOT / "mkdocs.yml").read_text()
    s3.client.create_bucket(Bucket="my-bucket")
    for f in sorted(p for p in LOGS.rglob("*") if p.is_file()):
        key = f"kafka-logs/{f.relative_to(LOGS).as_posix()}"
        s3.client.upload_file(str(f), "my-bucket", key)
    for name in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_ENDPOINT", s3.endpoint)
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.chdir(tmp_path)

    def absolute(code: str) -> str:
        code = code.replace('"examples/logs', f'"{LOGS}').replace(" examples/logs", f" {LOGS}")
        for name in WRITTEN:
            code = code.replace(f'"{name}', f'"{tmp_path / name}')
        return code

    namespace: dict[str, object] = {"__name__": "getting_started"}
    ran = {"python": 0, "sh": 0}
    for lang, code in _blocks(page):
        if lang == "python":
            exec(compile(absolute(code), f"{PAGE}", "exec"), namespace)
            ran["python"] += 1
        elif lang == "sh":
            for line in code.splitlines():
                command = line.split("#")[0].strip()
                if command.startswith("kafkalog "):
                    argv = shlex.split(absolute(" " + command).strip())[1:]
                    assert kafkalog.cli.main(argv) == 0, command
                    ran["sh"] += 1
    assert ran["python"] >= 4 and ran["sh"] >= 2
    assert (tmp_path / "restored-logs" / "orders-0").is_dir()
