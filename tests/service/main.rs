//! Black-box tests of Castellan over real HTTP, one test binary. Each test starts the service on
//! its own database: SQLite by default, PostgreSQL when `TEST_DATABASE_URL` is set. Beside them,
//! `wings` reads the host's source and holds its wings to the order the README names.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed expectation is a failed test

mod directory;
mod edges;
mod oauth;
mod operations;
mod protection;
mod support;
mod wings;
