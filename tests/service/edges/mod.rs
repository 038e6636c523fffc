//! The edges as a whole: the admin envelope, the OpenAPI document and the clients generated from it,
//! the console, and the bounds on untrusted input.

pub mod bounds;
pub mod console;
pub mod envelope;
pub mod generated_clients;
pub mod openapi_fuzzing;
