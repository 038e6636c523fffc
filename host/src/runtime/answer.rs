//! What an operation of the admin API, the console or the configuration import gives back when
//! it succeeds: one thing, one thing created, a page of things, or nothing (a deletion). The HTTP
//! edge puts it in the envelope; the console and the import read it as it is.

use crate::store::page::Page;

#[derive(Debug)]
pub enum Answer<T> {
    /// One thing, read or changed.
    Ok(T),
    /// One thing, created.
    Created(T),
    /// A page of things.
    Paged(Page<T>),
    /// Nothing to show: a deletion.
    Done,
}

impl<T> Answer<T> {
    /// The one thing answered, if it is one thing.
    pub fn data(self) -> Option<T> {
        match self {
            Self::Ok(data) | Self::Created(data) => Some(data),
            Self::Paged(_) | Self::Done => None,
        }
    }

    /// The page answered, if it is a page.
    pub fn page(self) -> Option<Page<T>> {
        match self {
            Self::Paged(page) => Some(page),
            _ => None,
        }
    }
}
