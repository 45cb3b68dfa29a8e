//! End-to-end tests of Sluice: see the files under `tests/tests/`.
