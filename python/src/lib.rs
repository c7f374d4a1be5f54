//! `memforest._memforest`: the native half of the `memforest` Python package (the
//! `Memory` class over [`memforest::Memory`], and `repair`); `memforest/__init__.py`
//! re-exports it with the exception classes of `memforest/_errors.py`.

mod callable;
mod convert;
mod error;
mod fork;
mod memory;
mod messages;
mod options;
mod repair;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _memforest(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<memory::Memory>()?;
    m.add_function(wrap_pyfunction!(fork::_after_fork_in_child, m)?)?;
    m.add_function(wrap_pyfunction!(repair::repair, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
