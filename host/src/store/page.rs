//! Paged lists: one query builder for every listable table.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{AnyPool, FromRow};

use super::Error;

pub const DEFAULT_PAGE_SIZE: u32 = 10;
pub const MAX_PAGE_SIZE: u32 = 200;
/// A searched list counts its matches up to this many; past it the page says it holds at least
/// this many, so a term that matches most of a large table costs no more than one that matches
/// a thousand rows.
pub const SEARCH_COUNT_CAP: i64 = 1000;

/// A request for one page, already normalised (page ≥ 1, size 1 to 200).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    pub number: u32,
    pub size: u32,
    pub search: Option<String>,
    pub status: Option<String>,
    pub sort_by: Option<String>,
    pub ascending: bool,
    pub created_from: Option<DateTime<Utc>>,
    pub created_to: Option<DateTime<Utc>>,
}

impl Default for PageRequest {
    fn default() -> Self {
        Self {
            number: 1,
            size: DEFAULT_PAGE_SIZE,
            search: None,
            status: None,
            sort_by: None,
            ascending: false,
            created_from: None,
            created_to: None,
        }
    }
}

impl PageRequest {
    /// Page numbers below 1 read as 1; sizes above 200 read as 200 (below 1, the default).
    pub fn normalised(number: i64, size: i64) -> (u32, u32) {
        let number = u32::try_from(number.max(1)).unwrap_or(u32::MAX);
        let size = if size < 1 { DEFAULT_PAGE_SIZE } else { size.min(i64::from(MAX_PAGE_SIZE)) as u32 };
        (number, size)
    }
}

/// One page of results.
#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub page_number: u32,
    pub page_size: u32,
    pub total_items: i64,
    /// More rows match than were counted: `total_items` is [`SEARCH_COUNT_CAP`], a floor.
    pub total_at_least: bool,
}

impl<T> Page<T> {
    pub fn total_pages(&self) -> i64 {
        (self.total_items + i64::from(self.page_size) - 1) / i64::from(self.page_size)
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            page_number: self.page_number,
            page_size: self.page_size,
            total_items: self.total_items,
            total_at_least: self.total_at_least,
        }
    }
}

/// What a table offers to paged lists.
#[derive(Debug)]
pub struct Listing {
    pub table: &'static str,
    pub columns: &'static str,
    /// The creation instant; the default sort and the `createdFrom`/`createdTo` range.
    pub created: &'static str,
    /// A unique column that breaks ties so pages never overlap.
    pub tie_breaker: &'static str,
    /// Text columns `searchTerm` is matched against (case-insensitive substring).
    pub search: &'static [&'static str],
    /// The column `status` restricts.
    pub status: Option<&'static str>,
    /// Names accepted by `sortBy`, with their columns.
    pub sortable: &'static [(&'static str, &'static str)],
}

/// The rows a page is drawn from: columns compared with values. Only the store module that owns
/// a listing builds its scope, from typed arguments.
#[derive(Debug, Clone)]
pub(super) struct Scope(Vec<(&'static str, Bind)>);

impl Scope {
    /// Rows whose `column` equals `value`.
    pub(super) fn of(column: &'static str, value: impl Into<Bind>) -> Self {
        Self(vec![(column, value.into())])
    }

    /// Also rows whose `column` compares with `value`: a plain column is compared with `=`, and a
    /// column may name its own operator (`expires_at >`).
    pub(super) fn and(mut self, column: &'static str, value: impl Into<Bind>) -> Self {
        self.0.push((column, value.into()));
        self
    }

    /// [`Scope::and`] when the value is given.
    pub(super) fn and_given<V: Into<Bind>>(self, column: &'static str, value: Option<V>) -> Self {
        match value {
            Some(value) => self.and(column, value),
            None => self,
        }
    }
}

/// A value bound to a placeholder.
#[derive(Debug, Clone)]
pub(super) enum Bind {
    Text(String),
    Int(i64),
    /// A flag column (INTEGER 0/1 on SQLite, BOOLEAN on PostgreSQL).
    Flag(bool),
}

impl From<&str> for Bind {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<String> for Bind {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<i64> for Bind {
    fn from(number: i64) -> Self {
        Self::Int(number)
    }
}

impl From<DateTime<Utc>> for Bind {
    fn from(at: DateTime<Utc>) -> Self {
        Self::Int(super::millis(at))
    }
}

impl From<bool> for Bind {
    fn from(flag: bool) -> Self {
        Self::Flag(flag)
    }
}

/// A SQL text with numbered placeholders and their values.
#[derive(Debug, Default)]
pub(super) struct Sql {
    text: String,
    binds: Vec<Bind>,
}

impl Sql {
    /// `text`, which holds no placeholder, then `rest` with its values.
    pub(super) fn joined(text: &str, rest: &Sql) -> Self {
        Self { text: format!("{text}{}", rest.text), binds: rest.binds.clone() }
    }

    pub(super) fn push(&mut self, text: &str) {
        self.text.push_str(text);
    }

    pub(super) fn bind(&mut self, value: Bind) {
        self.binds.push(value);
        self.text.push_str(&format!("${}", self.binds.len()));
    }

    /// `LIMIT` and `OFFSET` of the requested page.
    pub(super) fn bind_page(&mut self, request: &PageRequest) {
        self.push(" LIMIT ");
        self.bind(Bind::Int(i64::from(request.size)));
        self.push(" OFFSET ");
        self.bind(Bind::Int((i64::from(request.number) - 1) * i64::from(request.size)));
    }

    pub(super) fn query_as<'q, T>(&'q self) -> sqlx::query::QueryAs<'q, sqlx::Any, T, sqlx::any::AnyArguments>
    where
        T: for<'r> FromRow<'r, AnyRow>,
    {
        let mut query = sqlx::query_as::<_, T>(sqlx::AssertSqlSafe(self.text.clone()));
        for bind in &self.binds {
            query = match bind {
                Bind::Text(text) => query.bind(text.clone()),
                Bind::Int(number) => query.bind(*number),
                Bind::Flag(flag) => query.bind(*flag),
            };
        }
        query
    }
}

/// Where in a search column a term is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Within {
    Anywhere,
    /// At its start.
    Start,
}

/// How the rows a search term matches are found.
#[derive(Debug, Clone)]
pub(super) enum Matching<'a> {
    /// The term, case-insensitively, within any of the listing's search columns, row by row.
    Scan(Within),
    /// An expression, covered by an index, that is `LIKE` the pattern (PostgreSQL trigrams).
    Like { expression: &'a str, pattern: String },
    /// The rows `from` joins to a full-text table whose `table MATCH query` (SQLite FTS5); the
    /// same rows as a scan for the term `within` the search columns.
    Match { from: &'a str, table: &'a str, query: String, within: Within },
}

/// Fetches one page of `listing` rows restricted to `scope`.
pub(super) async fn fetch<T>(
    pool: &AnyPool,
    listing: &Listing,
    scope: &Scope,
    request: &PageRequest,
) -> Result<Page<T>, Error>
where
    T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
{
    fetch_matching(pool, listing, scope, request, &Matching::Scan(Within::Anywhere)).await
}

/// [`fetch`] with the search term's rows found by `matching`. A full-text match counts first: when
/// the term matches more rows than the count stops at, the rows of the page are dense among the
/// listing's and are found sooner by walking the listing in order than by sorting every match.
pub(super) async fn fetch_matching<T>(
    pool: &AnyPool,
    listing: &Listing,
    scope: &Scope,
    request: &PageRequest,
    matching: &Matching<'_>,
) -> Result<Page<T>, Error>
where
    T: for<'r> FromRow<'r, AnyRow> + Send + Unpin,
{
    let searched = request.search.as_deref().is_some_and(|term| !term.is_empty());
    let from = match matching {
        Matching::Match { from, .. } if searched => from,
        _ => listing.table,
    };
    let filter = conditions_matching(listing, scope, request, matching);
    let (total_items, total_at_least) = count(pool, from, &filter, searched).await?;
    let (from, filter) = match matching {
        Matching::Match { within, .. } if total_at_least => {
            (listing.table, conditions_matching(listing, scope, request, &Matching::Scan(*within)))
        }
        _ => (from, filter),
    };
    let mut select = Sql::joined(&format!("SELECT {} FROM {from}", listing.columns), &filter);
    select.push(&format!(" ORDER BY {}", order(listing, request)));
    select.bind_page(request);
    let items = select.query_as::<T>().fetch_all(pool).await?;

    Ok(Page { items, page_number: request.number, page_size: request.size, total_items, total_at_least })
}

/// How many rows `from` holds under `filter`: all of them, or when `capped` up to
/// [`SEARCH_COUNT_CAP`] (and whether there are more).
async fn count(pool: &AnyPool, from: &str, filter: &Sql, capped: bool) -> Result<(i64, bool), Error> {
    if !capped {
        let count = Sql::joined(&format!("SELECT COUNT(*) AS total FROM {from}"), filter);
        let (total,): (i64,) = count.query_as().fetch_one(pool).await?;
        return Ok((total, false));
    }
    let mut count = Sql::joined(&format!("SELECT COUNT(*) AS total FROM (SELECT 1 AS found FROM {from}"), filter);
    count.push(&format!(" LIMIT {}) AS matched", SEARCH_COUNT_CAP + 1));
    let (total,): (i64,) = count.query_as().fetch_one(pool).await?;
    Ok((total.min(SEARCH_COUNT_CAP), total > SEARCH_COUNT_CAP))
}

/// The `WHERE` clause that keeps the `listing` rows of `scope` a request asks for: its search
/// term, status and creation range.
pub(super) fn conditions(listing: &Listing, scope: &Scope, request: &PageRequest) -> Sql {
    conditions_matching(listing, scope, request, &Matching::Scan(Within::Anywhere))
}

fn conditions_matching(listing: &Listing, scope: &Scope, request: &PageRequest, matching: &Matching<'_>) -> Sql {
    let mut filter = Sql::default();
    filter.push(" WHERE 1 = 1");
    for (column, value) in &scope.0 {
        // A scope entry is a column (compared with `=`) or a column with its operator (`expires_at >`).
        let compared =
            if column.ends_with(['=', '<', '>']) { format!(" AND {column} ") } else { format!(" AND {column} = ") };
        filter.push(&compared);
        filter.bind(value.clone());
    }
    if let Some(term) = request.search.as_deref().filter(|t| !t.is_empty()) {
        match matching {
            Matching::Scan(within) => scanned(&mut filter, listing, term, *within),
            Matching::Like { expression, pattern } => {
                filter.push(&format!(" AND {expression} LIKE "));
                filter.bind(Bind::Text(pattern.clone()));
            }
            Matching::Match { table, query, .. } => {
                filter.push(&format!(" AND {table} MATCH "));
                filter.bind(Bind::Text(query.clone()));
            }
        }
    }
    if let (Some(status), Some(column)) = (&request.status, listing.status) {
        filter.push(&format!(" AND {column} = "));
        filter.bind(Bind::Text(status.clone()));
    }
    if let Some(from) = request.created_from {
        filter.push(&format!(" AND {} >= ", listing.created));
        filter.bind(Bind::from(from));
    }
    if let Some(to) = request.created_to {
        filter.push(&format!(" AND {} < ", listing.created));
        filter.bind(Bind::from(to));
    }
    filter
}

/// Keeps the rows one of whose search columns holds `term` `within` it, case-insensitively.
fn scanned(filter: &mut Sql, listing: &Listing, term: &str, within: Within) {
    let escaped = escape_like(&term.to_lowercase());
    let pattern = match within {
        Within::Anywhere => format!("%{escaped}%"),
        Within::Start => format!("{escaped}%"),
    };
    filter.push(" AND (");
    for (index, column) in listing.search.iter().enumerate() {
        if index > 0 {
            filter.push(" OR ");
        }
        filter.push(&format!("LOWER(COALESCE({column}, '')) LIKE "));
        filter.bind(Bind::Text(pattern.clone()));
        filter.push(" ESCAPE '\\'");
    }
    if listing.search.is_empty() {
        filter.push("1 = 1");
    }
    filter.push(")");
}

/// The `ORDER BY` terms of a page: the requested sort column (else the creation instant), then the
/// tie breaker, both in the requested direction.
pub(super) fn order(listing: &Listing, request: &PageRequest) -> String {
    let sort_column = request
        .sort_by
        .as_deref()
        .and_then(|name| listing.sortable.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)))
        .map_or(listing.created, |(_, column)| *column);
    let direction = if request.ascending { "ASC" } else { "DESC" };
    format!("{sort_column} {direction}, {} {direction}", listing.tie_breaker)
}

pub(super) fn escape_like(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_numbers_and_sizes_are_clamped() {
        assert_eq!(PageRequest::normalised(0, 10), (1, 10));
        assert_eq!(PageRequest::normalised(-5, 500), (1, 200));
        assert_eq!(PageRequest::normalised(3, 0), (3, DEFAULT_PAGE_SIZE));
    }

    #[test]
    fn like_wildcards_in_search_terms_are_literal() {
        assert_eq!(escape_like("50%_a\\"), "50\\%\\_a\\\\");
    }

    #[test]
    fn total_pages_round_up() {
        let page: Page<()> =
            Page { items: vec![], page_number: 1, page_size: 10, total_items: 21, total_at_least: false };
        assert_eq!(page.total_pages(), 3);
    }
}
