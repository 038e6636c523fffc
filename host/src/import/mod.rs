//! Imports into a realm. [`users`]: people with the password hashes other providers exported, read
//! a batch at a time so a file of any length is imported in bounded memory, every refused row
//! reported with its line and reasons and none of them stopping the others.

pub mod users;
