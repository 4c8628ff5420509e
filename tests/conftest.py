"""Shared test fixtures. The real-bytes corpus lives beside the repository, in
``../shared/corpus`` (override with ``KAFKALOG_CORPUS``); every suite decodes all of it, so its
absence is a failure, not a skip."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("KAFKALOG_CORPUS", REPO.parent / "shared" / "corpus"))


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not (CORPUS / "README.md").is_file():
        message = f"the corpus is missing: expected it at {CORPUS} (set KAFKALOG_CORPUS)"
        # Only a checkout without shared/ beside it (a hosted CI runner) may go without.
        if os.environ.get("KAFKALOG_CORPUS_OPTIONAL") == "1":
            pytest.skip(message)
        pytest.fail(message)
    return CORPUS
