//! The PyO3 bindings: the `kafkalog._native` extension module. Thin on purpose; the public
//! API, its docstrings and the Spark integration are in `python/kafkalog`.

mod cleanup;
mod cli;
mod errors;
mod internal;
mod options;
mod reader;
mod restore;
mod serve;
mod spark;
mod spark_writer;
mod storage;
mod values;
mod vocabulary;
mod writer;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::tune_allocator();
    m.add_class::<reader::Reader>()?;
    m.add_class::<writer::Writer>()?;
    m.add_class::<serve::PyServer>()?;
    m.add_function(wrap_pyfunction!(writer::create_job_staging, m)?)?;
    m.add_function(wrap_pyfunction!(writer::remove_staging, m)?)?;
    m.add_function(wrap_pyfunction!(writer::existing_targets, m)?)?;
    m.add_function(wrap_pyfunction!(writer::partition_dir_name, m)?)?;
    m.add_function(wrap_pyfunction!(writer::partition_dir, m)?)?;
    m.add_function(wrap_pyfunction!(writer::is_staging_dir_name, m)?)?;
    m.add_function(wrap_pyfunction!(writer::publish, m)?)?;
    m.add_function(wrap_pyfunction!(writer::append, m)?)?;
    m.add_function(wrap_pyfunction!(writer::upload_file, m)?)?;
    m.add_class::<spark_writer::SparkTaskWriter>()?;
    m.add_function(wrap_pyfunction!(spark_writer::spark_write_job, m)?)?;
    m.add_function(wrap_pyfunction!(spark_writer::spark_write_commit, m)?)?;
    m.add_function(wrap_pyfunction!(spark_writer::spark_write_abort, m)?)?;
    m.add_function(wrap_pyfunction!(spark_writer::spark_stream_commit, m)?)?;
    m.add_function(wrap_pyfunction!(spark_writer::spark_stream_abort, m)?)?;
    m.add_function(wrap_pyfunction!(storage::file_size, m)?)?;
    m.add_function(wrap_pyfunction!(storage::read_range, m)?)?;
    m.add_function(wrap_pyfunction!(storage::path_kind, m)?)?;
    m.add_function(wrap_pyfunction!(storage::list_files, m)?)?;
    m.add_function(wrap_pyfunction!(reader::read_index, m)?)?;
    m.add_function(wrap_pyfunction!(reader::verify, m)?)?;
    m.add_function(wrap_pyfunction!(reader::segments, m)?)?;
    m.add_function(wrap_pyfunction!(reader::read_topics, m)?)?;
    m.add_function(wrap_pyfunction!(reader::plan, m)?)?;
    m.add_function(wrap_pyfunction!(reader::list_offsets, m)?)?;
    m.add_function(wrap_pyfunction!(reader::rate_limit, m)?)?;
    m.add_function(wrap_pyfunction!(reader::segment_origin, m)?)?;
    m.add_function(wrap_pyfunction!(reader::rebuild_indexes, m)?)?;
    m.add_class::<internal::InternalFold>()?;
    m.add_function(wrap_pyfunction!(internal::dump_internal_record, m)?)?;
    m.add_function(wrap_pyfunction!(internal::dump_control_record, m)?)?;
    m.add_function(wrap_pyfunction!(internal::decode_internal_record, m)?)?;
    m.add_function(wrap_pyfunction!(internal::internal_table, m)?)?;
    m.add_function(wrap_pyfunction!(internal::cluster_state_tables, m)?)?;
    m.add_function(wrap_pyfunction!(values::schemas_table, m)?)?;
    m.add_function(wrap_pyfunction!(values::resolve_values, m)?)?;
    m.add_function(wrap_pyfunction!(values::encode_values, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_read_options, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_columns, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_schema, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_arrow_schema, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_batch, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_bool, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_typed_options, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_subscription, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_subscribed, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_typed_left_out, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_bounds, m)?)?;
    m.add_function(wrap_pyfunction!(spark::spark_check_partitions, m)?)?;

    m.add_function(wrap_pyfunction!(values::json_texts, m)?)?;
    m.add_function(wrap_pyfunction!(values::registry_records, m)?)?;
    m.add_function(wrap_pyfunction!(values::registry_import_requests, m)?)?;
    m.add_function(wrap_pyfunction!(cli::base_offset_of, m)?)?;
    m.add_function(wrap_pyfunction!(cli::snapshot_id_of, m)?)?;
    m.add_function(wrap_pyfunction!(cli::index_sanity_check, m)?)?;
    m.add_function(wrap_pyfunction!(cli::index_lookup, m)?)?;
    m.add_function(wrap_pyfunction!(cli::batch_first_timestamps, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup::compact, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup::retain, m)?)?;
    m.add_function(wrap_pyfunction!(restore::restore, m)?)?;
    vocabulary::add(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
