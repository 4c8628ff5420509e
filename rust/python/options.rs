//! Options dicts as they cross from Python: every key may be left out (the Rust `Default`
//! holds the default, defined once), a key of the wrong type is an `InvalidArgumentError`
//! naming it, and keys this version does not know are ignored.

use crate::error::Error;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Reads `key` from `dict` into `slot` when it is there.
pub fn set<'py, T>(dict: &Bound<'py, PyDict>, key: &str, slot: &mut T) -> PyResult<()>
where
    T: for<'a> FromPyObject<'a, 'py>,
    for<'a> <T as FromPyObject<'a, 'py>>::Error: Into<PyErr>,
{
    if let Some(value) = dict.get_item(key)? {
        *slot = value.extract::<T>().map_err(|e| {
            let e: PyErr = e.into();
            PyErr::from(Error::invalid_argument(format!("option {key}: {e}")))
        })?;
    }
    Ok(())
}

/// `impl FromPyObject` for an options struct with a `Default`: a dict of its fields' names.
macro_rules! options_from_dict {
    ($ty:ty { $($field:ident),* $(,)? }) => {
        impl<'py> pyo3::FromPyObject<'_, 'py> for $ty {
            type Error = pyo3::PyErr;
            fn extract(ob: pyo3::Borrowed<'_, 'py, pyo3::PyAny>) -> pyo3::PyResult<Self> {
                let dict = ob.cast::<pyo3::types::PyDict>()?;
                let mut options = <$ty>::default();
                $( $crate::python::options::set(&dict, stringify!($field), &mut options.$field)?; )*
                Ok(options)
            }
        }
    };
}
pub(crate) use options_from_dict;
