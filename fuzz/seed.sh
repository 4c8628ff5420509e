#!/usr/bin/env bash
# Seeds each fuzz target's corpus from the real bytes in tests/corpus.
set -euo pipefail
cd "$(dirname "$0")"
src=../tests/corpus
for target in segment v2_batch legacy_message decompression index_files control_record \
  values avro_value protobuf_value json_value; do
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
echo "seeded $i files"
