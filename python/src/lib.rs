//! `memforest._memforest`: the native half of the `memforest` Python package (the
//! `Memory` class over [`memforest::Memory`]); `memforest/__init__.py` re-exports it with the
//! exception classes of `memforest/_errors.py`.

mod callable;
mod convert;
mod error;
mod memory;
mod messages;
mod options;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _memforest(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<memory::Memory>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
