//! The parameters of a paged list: the paging and filtering every list takes, and a list's own
//! filters, refused by name when a list does not know them.

use chrono::{DateTime, Utc};

use crate::kernel::validate::{Notification, Rule};
use crate::runtime::error::Error;
use crate::store::page::PageRequest;

/// The name and value pairs of a query string, decoded, in order.
pub fn query_pairs(query: Option<String>) -> Vec<(String, String)> {
    query.map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default()
}

/// A paged list request: the paging and filtering parameters (`pageNumber`, `pageSize`,
/// `searchTerm`, `status`, `sortBy`, `sortDirection`, `createdFrom`, `createdTo`) and the list's own
/// filters. Any other parameter is refused.
#[derive(Debug)]
pub struct ListQuery {
    pub page: PageRequest,
    filters: Vec<(String, String)>,
}

impl ListQuery {
    pub fn parse(query: Option<String>, filters: &[&str]) -> Result<Self, Error> {
        let pairs = query_pairs(query);
        let mut page = PageRequest::default();
        let mut number = 1_i64;
        let mut size = i64::from(crate::store::page::DEFAULT_PAGE_SIZE);
        let mut refused = Vec::new();
        let mut own = Vec::new();
        let whole = |name: &str, value: &str, refused: &mut Vec<Notification>| {
            value.trim().parse::<i64>().ok().or_else(|| {
                refused.push(Notification::new(name, Rule::Type, format!("{name} must be a whole number")));
                None
            })
        };
        let instant = |name: &str, value: &str, refused: &mut Vec<Notification>| {
            DateTime::parse_from_rfc3339(value).map(|at| at.with_timezone(&Utc)).ok().or_else(|| {
                refused.push(Notification::new(name, Rule::Format, format!("{name} must be an ISO 8601 timestamp")));
                None
            })
        };
        for (name, value) in pairs {
            match name.as_str() {
                "pageNumber" => number = whole(&name, &value, &mut refused).unwrap_or(number),
                "pageSize" => size = whole(&name, &value, &mut refused).unwrap_or(size),
                "searchTerm" => page.search = Some(value).filter(|v| !v.trim().is_empty()),
                "status" => page.status = Some(value).filter(|v| !v.is_empty()),
                "sortBy" => page.sort_by = Some(value),
                "sortDirection" => match value.to_ascii_lowercase().as_str() {
                    "asc" => page.ascending = true,
                    "desc" => page.ascending = false,
                    _ => refused.push(Notification::new(name, Rule::OneOf, "sortDirection must be asc or desc")),
                },
                "createdFrom" => page.created_from = instant(&name, &value, &mut refused),
                "createdTo" => page.created_to = instant(&name, &value, &mut refused),
                _ if filters.contains(&name.as_str()) => own.push((name, value)),
                _ => {
                    let message = format!("{name} is not a parameter of this list");
                    refused.push(Notification::new(name, Rule::Unknown, message));
                }
            }
        }
        if !refused.is_empty() {
            return Err(Error::Validation(refused));
        }
        (page.number, page.size) = PageRequest::normalised(number, size);
        Ok(Self { page, filters: own })
    }

    /// The `status` asked for, one of `names` (a listing's statuses, `Kind::NAMES`); any other is
    /// refused on `status`, as a list never answers an empty page for a status that cannot be.
    pub fn status_in<T: Copy>(&self, names: &[(&'static str, T)]) -> Result<Option<T>, Error> {
        let Some(asked) = self.page.status.as_deref() else { return Ok(None) };
        if let Some((_, status)) = names.iter().find(|(name, _)| *name == asked) {
            return Ok(Some(*status));
        }
        let mut listed: Vec<&str> = names.iter().map(|(name, _)| *name).collect();
        let last = listed.pop().unwrap_or_default();
        let one_of = if listed.is_empty() { last.to_owned() } else { format!("{} or {last}", listed.join(", ")) };
        Err(Error::invalid("status", Rule::OneOf, format!("status must be {one_of}")))
    }

    /// The value of one of the list's own filters, when given.
    pub fn filter(&self, name: &str) -> Option<&str> {
        self.filters.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_parameters_follow_the_spec() {
        let q = |text: &str| ListQuery::parse(Some(text.to_owned()), &["realmId"]);
        let list = q("pageNumber=0&pageSize=1000&realmId=x").unwrap();
        assert_eq!((list.page.number, list.page.size), (1, 200));
        assert_eq!(list.filter("realmId"), Some("x"));
        let list = q("sortDirection=ASC&createdFrom=2030-01-01T00%3A00%3A00Z").unwrap();
        assert!(list.page.ascending);
        assert!(list.page.created_from.is_some());
        assert!(q("pageSize=ten").is_err());
        assert!(q("sortDirection=up").is_err());
        assert!(q("colour=red").is_err());
    }
}
