//! The PyO3 bindings: the `kafkalog._native` extension module. Thin on purpose; the public
//! API, its docstrings and the Spark integration are in `python/kafkalog`.

mod cleanup;
mod errors;
mod reader;
mod writer;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<reader::Reader>()?;
    m.add_class::<writer::Writer>()?;
    m.add_function(wrap_pyfunction!(reader::read_index, m)?)?;
    m.add_function(wrap_pyfunction!(reader::verify, m)?)?;
    m.add_function(wrap_pyfunction!(reader::segments, m)?)?;
    m.add_function(wrap_pyfunction!(reader::split_points, m)?)?;
    m.add_function(wrap_pyfunction!(reader::rebuild_indexes, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup::compact, m)?)?;
    m.add_function(wrap_pyfunction!(cleanup::retain, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
