//! The integration tests of the `sluice` tool, compiled as one binary.

mod swf_support;

mod swf_gen;
mod swf_import;
mod swf_parse;
