//! The bridge to the driver: the calls ([`cu`]) and their statuses
//! ([`check`]).

mod error;
pub(crate) mod ffi;

pub use error::{DriverError, check};
/// The driver functions memplan calls; see `ffi.rs` for why they are not
/// cust_raw's own declarations.
pub(crate) use ffi as cu;
pub use ffi::Status;
