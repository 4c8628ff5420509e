#!/usr/bin/env bash
# Seeds each fuzz target's corpus from the real bytes in tests/corpus.
set -euo pipefail
cd "$(dirname "$0")"
src=../tests/corpus
for target in segment v2_batch legacy_message decompression index_files control_record \
  values avro_value protobuf_value json_value jni_request; do
  mkdir -p "corpus/$target"
done
i=0
while IFS= read -r -d '' f; do
  [ "$(stat -c %s "$f")" -le 1048576 ] || continue
  i=$((i + 1))
  for target in segment v2_batch legacy_message decompression; do
    cp "$f" "corpus/$target/seed-$i"
  done
  case "$f" in
    *.index|*.timeindex|*.txnindex|*.snapshot|*checkpoint) cp "$f" "corpus/index_files/seed-$i" ;;
  esac
done < <(find "$src/segments" "$src/vectors" -type f ! -name '*.json' -print0)
printf '\x04\x00\x00\x00\x01\x00\x00\x00\x00\x00\x05' > corpus/control_record/seed-marker
# Protobuf: a payload with a string, a nested message, a packed list and a map entry.
printf '\x40\xa2\x01\x03abc\x92\x01\x04\x0a\x02hi\xa2\x01\x03\x01\x02\x03\xaa\x01\x05\x0a\x01k\x12\x00' \
  > corpus/protobuf_value/seed-message
# JSON: a row of every type, and nested nodes.
printf '\x10{"i": 1, "f": 2.5, "b": true, "s": "x", "t": "2024-01-01T00:00:00Z", "d": "2024-01-01", "list": [{"v": 1, "next": {"v": 2}}], "opt": [1], "bag": {"k": 1}, "any": null}' \
  > corpus/json_value/seed-row
# JNI requests as the Java side sends them: options, a ListOffsets and plan request, a task's
# reader with typed values, nested pruning and a work item.
printf '%s' '{"options": {"path": "/l", "subscribePattern": "o.*", "startingOffsets": "{\"o\": {\"0\": 1}}", "valueFormat": "avro", "schemaRegistry": "/l"}, "streaming": true}' \
  > corpus/jni_request/seed-options
printf '%s' '{"segments": [["/l/o-0/0.log", "o", 0, 10]], "timestamps": [["o", 0, 5]], "bounds": [["o", 0, 1, 9]], "target_bytes": 64, "ranges": [[0, 9], [3, 4]], "limit": 5, "storage": {"aws_region": "x"}}' \
  > corpus/jni_request/seed-plan
printf '%s' '{"items": [["/l/o-0/0.log", 0, 100, "o", 0, 0, 100, 1, 9, [[7, 1, 2]]]], "columns": ["value", "value_error"], "prune": {"value": {"type": "struct", "fields": [{"name": "id", "type": "long"}]}}, "values": {"value_format": "avro", "on_value_error": "null", "value_schema": ["AVRO", "{\"type\": \"record\", \"name\": \"E\", \"fields\": [{\"name\": \"id\", \"type\": \"long\"}]}", []], "schemas": [[1, "o-value", 1, "AVRO", "\"long\"", [], false, null]]}, "binary_view": true, "batch_size": 8}' \
  > corpus/jni_request/seed-open
echo "seeded $i files"
