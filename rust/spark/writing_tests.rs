//! Tests of `writing.rs`: tasks, commits and a replayed micro-batch, on local directories.

use super::*;
use arrow_array::{BinaryArray, Int32Array, Int64Array};

fn options(dir: &Path, extra: &[(&str, &str)], streaming: bool) -> Arc<SparkWriteOptions> {
    let mut raw: BTreeMap<String, String> = extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    raw.insert("path".into(), dir.to_string_lossy().into_owned());
    raw.insert("fsync".into(), "false".into());
    Arc::new(SparkWriteOptions::parse(&raw, streaming).unwrap())
}

fn rows(topics: &[&str], partitions: &[i32], offsets: Option<&[i64]>) -> RecordBatch {
    let mut fields = vec![
        Field::new("topic", DataType::Utf8, true),
        Field::new("partition", DataType::Int32, true),
        Field::new("value", DataType::Utf8, true),
    ];
    let values: Vec<String> = (0..topics.len()).map(|i| format!("v{i}")).collect();
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(topics.to_vec())),
        Arc::new(Int32Array::from(partitions.to_vec())),
        Arc::new(StringArray::from(values)),
    ];
    if let Some(o) = offsets {
        fields.push(Field::new("offset", DataType::Int64, true));
        columns.push(Arc::new(Int64Array::from(o.to_vec())));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

fn read(dir: &Path) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    for batch in crate::read::reader::ReaderBuilder::new()
        .build(dir)
        .unwrap()
    {
        let batch = batch.unwrap();
        let offsets = batch
            .column_by_name("offset")
            .unwrap()
            .as_primitive::<Int64Type>()
            .clone();
        let values =
            arrow_cast::cast(batch.column_by_name("value").unwrap(), &DataType::Binary).unwrap();
        let values = values
            .as_any()
            .downcast_ref::<BinaryArray>()
            .unwrap()
            .clone();
        for i in 0..batch.num_rows() {
            out.push((offsets.value(i), values.value(i).to_vec()));
        }
    }
    out
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kafkalog-spark-writing-{name}-{}",
        placement::unique()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn tasks_stage_and_the_commit_joins_and_publishes() {
    let root = temp("batch");
    let o = options(&root, &[], false);
    let staging = job_staging(&o, "spark").unwrap();
    // Two tasks; a-0's rows in both, out of offset order in the first.
    let mut t1 = TaskWriter::batch(o.clone(), &staging, None);
    t1.write(&rows(&["a", "b", "a"], &[0, 0, 0], Some(&[5, 0, 2])))
        .unwrap();
    let m1 = t1.finish().unwrap();
    let mut t2 = TaskWriter::batch(o.clone(), &staging, None);
    t2.write(&rows(&["a"], &[0], Some(&[9]))).unwrap();
    let m2 = t2.finish().unwrap();
    assert_eq!(m1.partitions.len(), 2);
    let back = TaskMessage::from_json(&m1.to_json()).unwrap();
    assert_eq!(back, m1);
    assert!(!root.join("a-0").exists());
    commit(&o, &staging, false, &[m1, m2]).unwrap();
    assert!(!staging.exists());
    // Offset order within a task (v2 at 2 before v0 at 5), then the second task's row.
    let a = read(&root.join("a-0"));
    assert_eq!(
        a.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>(),
        vec![b"v2".to_vec(), b"v0".to_vec(), b"v0".to_vec()]
    );
    assert_eq!(read(&root.join("b-0")).len(), 1);
    // Appending continues the log; overwriting replaces it.
    let staging = job_staging(&o, "spark").unwrap();
    let mut t = TaskWriter::batch(o.clone(), &staging, None);
    t.write(&rows(&["b"], &[0], None)).unwrap();
    let m = t.finish().unwrap();
    commit(&o, &staging, false, &[m]).unwrap();
    assert_eq!(
        read(&root.join("b-0"))
            .iter()
            .map(|r| r.0)
            .collect::<Vec<_>>(),
        [0, 1]
    );
    let staging = job_staging(&o, "spark").unwrap();
    let mut t = TaskWriter::batch(o.clone(), &staging, None);
    t.write(&rows(&["b"], &[0], None)).unwrap();
    let m = t.finish().unwrap();
    commit(&o, &staging, true, &[m]).unwrap();
    assert_eq!(read(&root.join("b-0")).len(), 1);
    assert_eq!(read(&root.join("a-0")).len(), 3); // not written: left alone
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn bad_rows_fail_before_anything_is_written() {
    let root = temp("bad");
    let o = options(&root, &[], false);
    let staging = job_staging(&o, "spark").unwrap();
    let mut t = TaskWriter::batch(o.clone(), &staging, None);
    let err = t.write(&rows(&["ok", "../x"], &[0, 0], None)).unwrap_err();
    assert!(err.message.contains("../x"), "{}", err.message);
    let no_topic = RecordBatch::try_new(
        Arc::new(Schema::new(vec![Field::new(
            "value",
            DataType::Binary,
            true,
        )])),
        vec![Arc::new(BinaryArray::from(vec![&b"x"[..]]))],
    )
    .unwrap();
    let err = t.write(&no_topic).unwrap_err();
    assert!(err
        .message
        .contains("no 'topic' column and no topic option"));
    let grouped = options(&root, &[("rowsGrouped", "true")], false);
    let mut t = TaskWriter::batch(grouped, &staging, None);
    let err = t
        .write(&rows(&["a", "b", "a"], &[0, 0, 0], None))
        .unwrap_err();
    assert!(
        err.message.contains("rows of a-0 are not together"),
        "{}",
        err.message
    );
    abort(&o, &staging).unwrap();
    assert!(!staging.exists());
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_replayed_epoch_is_appended_once() {
    let root = temp("stream");
    let o = options(&root, &[("writerId", "q")], true);
    prepare_stream(&o).unwrap();
    for _ in 0..2 {
        let mut t = TaskWriter::stream(o.clone(), None).unwrap();
        t.write(&rows(&["s"], &[1], Some(&[100]))).unwrap();
        let m = t.finish().unwrap();
        let staging = m.staging.clone().unwrap();
        commit_stream(&o, 7, &[m]).unwrap();
        assert!(!staging.exists());
    }
    // New offsets (the `offset` column is not kept), one append for epoch 7.
    assert_eq!(
        read(&root.join("s-1"))
            .iter()
            .map(|r| r.0)
            .collect::<Vec<_>>(),
        [0]
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// A string column as Spark's Arrow IPC carries it, built without Arrow's checks.
fn unchecked_strings(values: &[u8], offsets: &[i32]) -> ArrayRef {
    let data = arrow_data::ArrayData::builder(DataType::Utf8)
        .len(offsets.len() - 1)
        .add_buffer(arrow_buffer::Buffer::from_slice_ref(offsets))
        .add_buffer(arrow_buffer::Buffer::from_slice_ref(values));
    // SAFETY: only `validated_rows` reads it, which validates it first.
    arrow_array::make_array(unsafe { data.build_unchecked() })
}

#[test]
fn spark_strings_that_are_not_utf8_are_written_as_their_bytes() {
    let value = unchecked_strings(b"ok\xc3\x28", &[0, 2, 4]);
    let key: ArrayRef = Arc::new(arrow_array::StringArray::from(vec!["a", "b"]));
    let batch = RecordBatch::try_from_iter([("key", key), ("value", value)]).unwrap();
    let rows = validated_rows(batch).unwrap();
    assert_eq!(rows.column(0).data_type(), &DataType::Utf8);
    assert_eq!(rows.column(1).data_type(), &DataType::Binary);
    let bytes = rows.column(1).as_binary::<i32>();
    assert_eq!(bytes.value(1), b"\xc3\x28");
    // Offsets past the values are an error, not a read out of bounds.
    let broken = unchecked_strings(b"ok", &[0, 2, 9]);
    let batch = RecordBatch::try_from_iter([("value", broken)]).unwrap();
    let e = validated_rows(batch).unwrap_err();
    assert!(e.to_string().contains("not valid Arrow"), "{e}");
}

#[cfg(feature = "jni")]
#[test]
fn spark_ipc_rows_with_strings_that_are_not_utf8_decode_unvalidated() {
    let value = unchecked_strings(b"ok\xc3\x28", &[0, 2, 4]);
    let batch = RecordBatch::try_from_iter([("value", value)]).unwrap();
    let mut bytes = Vec::new();
    {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut bytes, &batch.schema()).unwrap();
        w.write(&batch).unwrap();
        w.finish().unwrap();
    }
    // Arrow's reader unvalidated, as the JVM source reads Spark's rows (arrow-ipc 59's
    // StreamDecoder validates record batches whatever it is told: its StreamReader does not).
    let reader =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
    let mut reader = unsafe { reader.with_skip_validation(true) };
    let got = reader.next().map(|b| b.unwrap());
    let rows = validated_rows(got.unwrap()).unwrap();
    assert_eq!(rows.column(0).data_type(), &DataType::Binary);
}
