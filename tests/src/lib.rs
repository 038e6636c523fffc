//! Black-box tests of Castellan live in `service/`; this library is empty.
