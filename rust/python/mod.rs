//! The PyO3 bindings: the `kafkalog._native` extension module. Thin on purpose; the public
//! API, its docstrings and the Spark integration are in `python/kafkalog`.

mod errors;
mod reader;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<reader::Reader>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
