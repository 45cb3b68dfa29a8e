//! libsmd's tests against a fake controller's Nonstop service: the Rust API, the C example
//! program built with `cc` against the shared and the static library, and the header.

mod c_example;
mod client_fake;
mod fake;
mod header;
