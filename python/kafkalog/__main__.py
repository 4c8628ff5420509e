"""``python -m kafkalog``: the ``kafkalog`` command-line tool (see :mod:`kafkalog.cli`)."""

from kafkalog.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
