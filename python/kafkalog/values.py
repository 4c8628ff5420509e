"""Typed keys and values: records decoded with the schemas their producers registered, read
from the Schema Registry's own storage topic in the same backup (``_schemas``) or given
directly. See ``docs/values.md``.

:func:`schemas` is the registry as a table. :func:`value_options` checks and packs the
options :func:`kafkalog.read` and its siblings take (``key_format``, ``value_format``,
``schemas``, ``on_value_error``, subjects, versions, explicit schemas, framing); the core
does the rest (``rust/values/``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pyarrow as pa

from kafkalog._native import nearest_name as _nearest_name
from kafkalog._native import registry_import_requests as _registry_import_requests
from kafkalog._native import schemas_table as _schemas_table
from kafkalog._storage import storage_kwargs as _storage_kwargs
from kafkalog.errors import InvalidArgumentError, UndecodedRecordWarning
from kafkalog.errors import warn as _warn

__all__ = [
    "schemas",
    "export_schemas",
    "value_options",
    "FORMATS",
    "Format",
    "OnValueError",
]

#: How a key or value is read.
Format = Literal["binary", "string", "avro", "protobuf", "json", "auto"]
#: What a key or value that does not decode does.
OnValueError = Literal["error", "null"]
#: The formats, as :data:`Format` lists them.
FORMATS: tuple[str, ...] = ("binary", "string", "avro", "protobuf", "json", "auto")

#: File name endings of a schema given as a file, and the language each holds.
_SCHEMA_FILES = {".avsc": "AVRO", ".proto": "PROTOBUF", ".json": "JSON"}


def schemas(
    path: str | os.PathLike[str],
    *,
    topic: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> pa.Table:
    """The Schema Registry whose storage topic is under ``path``, as a table, folded as the
    registry rebuilds itself at startup.

    ``path`` is anything :func:`kafkalog.read` reads: a log directory holding the
    ``_schemas-0`` partition (``topic`` names another ``kafkastore.topic``), the partition
    directory, a segment, an object-store or tiered-storage URI.

    Columns: ``subject`` (qualified ``:.ctx:name`` outside the default context), ``version``,
    ``id``, ``type`` (``AVRO``, ``PROTOBUF``, ``JSON``), ``schema``, ``references`` (list of
    ``name``, ``subject``, ``version``), ``deleted`` (soft-deleted), ``offset`` (of the
    record that registered it), ``context``. Hard-deleted versions are not in it. Records the
    fold cannot use are passed over with an :class:`UndecodedRecordWarning`.
    """
    batch, issues = _schemas_table(
        os.fspath(path),
        topic=topic,
        storage_options=_storage_kwargs(storage_options, None)["storage_options"],
    )
    for offset, why in issues:
        _warn(UndecodedRecordWarning(f"_schemas record at offset {offset}: {why}", offset=offset))
    return pa.Table.from_batches([pa.record_batch(batch)])


def export_schemas(
    path: str | os.PathLike[str],
    *,
    topic: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The registry whose storage topic is under ``path`` (as :func:`schemas` reads it) as the
    requests that import it into a running Schema Registry with the same ids and versions:
    each the body of ``POST /subjects/{subject}/versions`` (``version``, ``id``,
    ``schemaType``, ``references``, ``schema``) with its ``subject`` beside, in the order they
    were registered (so that references come first), ``"deleted": True`` on soft-deleted
    versions (delete them after importing). The registry (or the subjects) must be in
    ``IMPORT`` mode (``PUT /mode {"mode": "IMPORT"}``); see docs/values.md. The same rows
    :func:`kafkalog.write_schemas` takes."""
    requests, issues = _registry_import_requests(
        os.fspath(path),
        topic=topic,
        storage_options=_storage_kwargs(storage_options, None)["storage_options"],
    )
    for offset, why in issues:
        _warn(UndecodedRecordWarning(f"_schemas record at offset {offset}: {why}", offset=offset))
    return [json.loads(r) for r in requests]


def _schema_arg(schema: Any, what: str) -> tuple[str, str, list[tuple[str, str]]]:
    """A schema as the core takes it: (type, text, references)."""
    if isinstance(schema, Mapping) and "schema" in schema:
        text = schema["schema"]
        if not isinstance(text, str):
            text = json.dumps(text)
        refs = [(str(k), str(v)) for k, v in dict(schema.get("references") or {}).items()]
        return (str(schema.get("schemaType") or "AVRO").upper(), text, refs)
    if isinstance(schema, Mapping | list):
        return ("AVRO", json.dumps(schema), [])
    if isinstance(schema, os.PathLike) or (
        isinstance(schema, str) and os.path.splitext(schema)[1] in _SCHEMA_FILES
    ):
        path = os.fspath(schema)
        kind = _SCHEMA_FILES.get(os.path.splitext(path)[1], "AVRO")
        with open(path, encoding="utf-8") as f:
            return (kind, f.read(), [])
    if isinstance(schema, str):
        return ("AVRO", schema, [])
    raise InvalidArgumentError(f"{what}: a schema is a text, a dict or a file, not {schema!r}")


def _schemas_arg(schemas: Any) -> dict[str, Any]:
    """``schemas=`` as the core takes it: a path of the registry's storage topic, or schemas
    by id."""
    if schemas is None:
        return {}
    if isinstance(schemas, str | os.PathLike):
        return {"schemas_path": os.fspath(schemas)}
    if isinstance(schemas, Mapping):
        rows = []
        for i, (schema_id, schema) in enumerate(sorted(schemas.items())):
            kind, text, refs = _schema_arg(schema, f"schemas[{schema_id!r}]")
            subject = ""
            if isinstance(schema, Mapping) and schema.get("subject"):
                subject = str(schema["subject"])
            version = i + 1
            if isinstance(schema, Mapping) and schema.get("version"):
                version = int(schema["version"])
            # References given as texts become subjects named by the reference.
            ref_rows = [(name, name, 1) for name, _ in refs]
            rows.append((int(schema_id), subject, version, kind, text, ref_rows, False, None))
            rows.extend((-1, name, 1, kind, ref_text, [], False, None) for name, ref_text in refs)
        return {"schemas": rows}
    raise InvalidArgumentError(
        "schemas must be a path (the registry's storage topic) or a mapping of schema id to "
        f"schema, not {type(schemas).__name__}"
    )


def _subject_list(subjects: Sequence[str] | None, what: str) -> list[str] | None:
    """A list of subjects: a sequence of names, or one text of comma-separated names."""
    if subjects is None:
        return None
    if isinstance(subjects, str):
        subjects = subjects.split(",")
    out = [str(s).strip() for s in subjects if str(s).strip()]
    if not out:
        raise InvalidArgumentError(f"{what}: no subject named")
    return out


#: What ``value_options={...}`` may hold: :func:`value_options`' own keywords less those the
#: reading and writing functions take as arguments of their own.
EXTRA_VALUE_OPTIONS: tuple[str, ...] = (
    "key_subject",
    "value_subject",
    "key_subjects",
    "value_subjects",
    "key_version",
    "value_version",
    "key_schema",
    "value_schema",
    "framing",
    "schemas_topic",
    "key_message",
    "value_message",
)
_OWN_ARGUMENTS = ("key_format", "value_format", "schemas", "on_value_error")


def extra_value_options(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """``value_options`` as :func:`kafkalog.read` and its siblings take it, checked: a key that
    is no option is an :class:`InvalidArgumentError` naming it and the nearest option."""
    out = dict(given or {})
    for key in out:
        if key in EXTRA_VALUE_OPTIONS or key == "resolved":  # a Spark driver's, for its tasks
            continue
        if key in _OWN_ARGUMENTS:
            raise InvalidArgumentError(
                f"value_options: {key} is an argument of its own: {key}=..., not in value_options"
            )
        names = EXTRA_VALUE_OPTIONS + _OWN_ARGUMENTS
        near = _nearest_name(str(key), list(names))
        hint = f" (did you mean {near}?)" if near else ""
        raise InvalidArgumentError(
            f"value_options: unknown option {key!r}{hint}; the options are "
            f"{', '.join(EXTRA_VALUE_OPTIONS)}"
        )
    return out


def _message_arg(message: str | Sequence[str] | None, what: str) -> str | None:
    """Protobuf message names as the core takes them: full names separated by commas."""
    if message is None:
        return None
    names = [message] if isinstance(message, str) else list(message)
    if not all(isinstance(n, str) for n in names):
        raise InvalidArgumentError(f"{what}: a message is named by its full name, not {message!r}")
    joined = ",".join(n.strip() for n in names if n.strip())
    if not joined:
        raise InvalidArgumentError(f"{what}: no message named")
    return joined


def value_options(
    *,
    key_format: Format = "binary",
    value_format: Format = "binary",
    schemas: Any = None,
    on_value_error: OnValueError = "error",
    key_subject: str | None = None,
    value_subject: str | None = None,
    key_subjects: Sequence[str] | None = None,
    value_subjects: Sequence[str] | None = None,
    key_version: int | None = None,
    value_version: int | None = None,
    key_schema: Any = None,
    value_schema: Any = None,
    framing: Literal["confluent", "apicurio", "none"] = "confluent",
    schemas_topic: str | None = None,
    key_message: str | Sequence[str] | None = None,
    value_message: str | Sequence[str] | None = None,
    resolved: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The ``values`` option of the native reader, checked (None when nothing is decoded).
    ``resolved``: the option as a driver resolved it (``kafkalog._native.resolve_values``),
    taken as it is.

    ``key_subjects``/``value_subjects``: subjects of several record types read into one
    column, a struct with a field per type (``docs/values.md``). ``key_message``/
    ``value_message``: the Protobuf message of the column by full name, or several (a list,
    or names separated by commas: a struct with a field per message)."""
    for name, fmt in (("key_format", key_format), ("value_format", value_format)):
        if fmt not in FORMATS:
            raise InvalidArgumentError(f"{name} must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if on_value_error not in ("error", "null"):
        raise InvalidArgumentError(
            f'on_value_error must be "error" or "null", not {on_value_error!r}'
        )
    if key_format == "binary" and value_format == "binary":
        return None
    if resolved is not None:
        return dict(resolved)
    out: dict[str, Any] = {
        "key_format": key_format,
        "value_format": value_format,
        "on_value_error": on_value_error,
        "key_subject": key_subject,
        "value_subject": value_subject,
        "key_subjects": _subject_list(key_subjects, "key_subjects"),
        "value_subjects": _subject_list(value_subjects, "value_subjects"),
        "key_version": key_version,
        "value_version": value_version,
        "framing": framing,
        "schemas_topic": schemas_topic,
        "key_message": _message_arg(key_message, "key_message"),
        "value_message": _message_arg(value_message, "value_message"),
        **_schemas_arg(schemas),
    }
    if key_schema is not None:
        out["key_schema"] = _schema_arg(key_schema, "key_schema")
    if value_schema is not None:
        out["value_schema"] = _schema_arg(value_schema, "value_schema")
    return out
