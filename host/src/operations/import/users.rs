//! A user import: a job fed batches of rows (JSON objects with their line numbers). Each batch is
//! checked row by row and written in one transaction with its `user_created` (and, when rows
//! overwrite people, `user_updated`) events, its refused rows and the job's progress, so the job
//! can be read while it runs and a failure keeps what was written before it.
//!
//! A row names a person by username; a row whose username or e-mail address another person of the
//! realm already has (an earlier row of the same import included) is a conflict, handled by the
//! job's [`OnConflict`]. Password hashes are stored as exported ([`crate::kernel::passwords::imported`]),
//! never re-hashed at import: the person's next sign-in checks and replaces them.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::kernel::ids::{ImportId, UserId};
use crate::kernel::passwords::imported::{self, Exported, Pbkdf2Digest};
use crate::kernel::validate::{
    Body, Notification, Rule, boolean, email, integer, list_of, one_of, parsed, text, username,
};
use crate::runtime::changes::{self, Author};
use crate::runtime::context::Context;
use crate::runtime::error::Error;
use crate::store::clients::Client;
use crate::store::events::{self, EventType};
use crate::store::imports::{self as store, ImportStatus, Link, OnConflict, Refusal, UserImport};
use crate::store::trail::{Change, ChangeAction, Place, ResourceKind};
use crate::store::users::{self as user_store, User, UserStatus};

/// A row with its line (its position in a JSON array): the JSON value, or why the line is not JSON.
pub type Row = (i64, Result<Value, String>);

/// Rows written in one transaction.
pub const BATCH_ROWS: usize = 500;

/// The names a row may use for roles, groups and organizations, with their ids.
#[derive(Debug, Default)]
struct Directory {
    realm_roles: HashMap<String, String>,
    client_roles: HashMap<String, String>,
    groups: HashMap<String, String>,
    organizations: HashMap<String, String>,
}

/// A row read into a person, with where they are added.
#[derive(Debug)]
struct Candidate {
    line: i64,
    user: User,
    /// Which of the optional fields the row gave, for an overwrite.
    given: Given,
    links: Vec<(Link, String)>,
    /// The authenticator apps the row brings (`totp`).
    factors: Vec<super::factors::Factor>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Given {
    email: bool,
    first_name: bool,
    last_name: bool,
    email_confirmed: bool,
    status: bool,
    password: bool,
}

/// A running import.
pub struct Importer<'a> {
    context: &'a Context,
    by: Author<'a>,
    client: &'a Client,
    job: UserImport,
    directory: Directory,
    /// The rows taken so far by username and by lowercase e-mail, with their lines: those of the
    /// batch being sorted, and in a dry run (where earlier batches are not written) all of them.
    names_seen: HashMap<String, i64>,
    emails_seen: HashMap<String, i64>,
    /// In a dry run, the refused rows, which are kept nowhere else.
    dry_run: Option<Vec<Refusal>>,
}

/// An import ended: the job, and in a dry run the refused rows (a real run keeps them with the job).
#[derive(Debug)]
pub struct Finished {
    pub job: UserImport,
    pub dry_run_refusals: Option<Vec<Refusal>>,
}

impl<'a> Importer<'a> {
    /// Starts an import into the client's realm: the job is stored Running before any row is read.
    /// A dry run checks every row as the import would, and writes and publishes nothing.
    pub async fn start(
        context: &'a Context,
        by: Author<'a>,
        client: &'a Client,
        on_conflict: OnConflict,
        dry_run: bool,
    ) -> Result<Importer<'a>, Error> {
        let now = context.clock.now();
        let job = UserImport {
            id: ImportId::fresh(),
            account_id: by.actor.account_id.clone(),
            realm_id: client.realm_id.clone(),
            client_id: client.id.clone(),
            status: ImportStatus::Running,
            on_conflict,
            rows_read: 0,
            created: 0,
            updated: 0,
            skipped: 0,
            refused: 0,
            failure: None,
            created_by_type: by.actor.actor_type,
            created_by_id: by.actor.acting_id(),
            started_at: now,
            updated_at: now,
            finished_at: None,
        };
        if !dry_run {
            store::insert(context.store.writer(), &job).await?;
        }
        let directory = directory(context, client).await?;
        let (names_seen, emails_seen) = (HashMap::new(), HashMap::new());
        let dry_run = dry_run.then(Vec::new);
        Ok(Self { context, by, client, job, directory, names_seen, emails_seen, dry_run })
    }

    /// In a dry run, the names an import of configuration made first would add: realm roles,
    /// client roles (`client/role`), groups and organizations, so rows naming them are checked as
    /// they will be. A real import knows only what the realm holds.
    pub fn foresee(
        &mut self,
        roles: Vec<String>,
        client_roles: Vec<String>,
        groups: Vec<String>,
        organizations: Vec<String>,
    ) {
        if self.dry_run.is_none() {
            return;
        }
        let directory = &mut self.directory;
        let lists = [
            (&mut directory.realm_roles, roles),
            (&mut directory.client_roles, client_roles),
            (&mut directory.groups, groups),
            (&mut directory.organizations, organizations),
        ];
        for (known, names) in lists {
            for name in names {
                known.entry(name).or_default();
            }
        }
    }

    /// Reads and writes one batch of rows: `(line, row)`, the row `Err` when it was not JSON.
    pub async fn take(&mut self, rows: Vec<Row>) -> Result<(), Error> {
        let now = self.context.clock.now();
        let mut refusals = Vec::new();
        let mut candidates = Vec::new();
        for (line, row) in rows {
            self.job.rows_read += 1;
            // A refused row is reported with the username it gives, when it gives one.
            let named = row.as_ref().ok().and_then(|row| row.get("username")?.as_str().map(str::to_owned));
            match row
                .map_err(|why| vec![Notification::new("", Rule::Json, why)])
                .and_then(|row| self.read(line, row, now))
            {
                Ok(candidate) => candidates.push(candidate),
                Err(problems) => refusals.push(refusal(line, named.as_deref(), &problems)),
            }
        }
        if self.dry_run.is_none() {
            // Earlier batches are written: their people are found as existing ones.
            self.names_seen.clear();
            self.emails_seen.clear();
        }
        let (creates, updates) = self.sort(candidates, &mut refusals).await?;
        if let Some(kept) = &mut self.dry_run {
            self.job.created += i64::try_from(creates.len()).unwrap_or(i64::MAX);
            self.job.updated += i64::try_from(updates.len()).unwrap_or(i64::MAX);
            self.job.refused += i64::try_from(refusals.len()).unwrap_or(i64::MAX);
            kept.extend(refusals);
            return Ok(());
        }
        let mut tx = self.context.store.begin().await?;
        let new_users: Vec<User> = creates.iter().map(|c| c.user.clone()).collect();
        user_store::insert_many(&mut *tx, &new_users).await?;
        let mut links: Vec<(Link, String, String)> = Vec::new();
        for candidate in creates.iter().chain(&updates) {
            links.extend(candidate.links.iter().map(|(link, id)| (*link, id.clone(), candidate.user.id.to_string())));
        }
        for kind in [Link::Role, Link::Group, Link::Organization] {
            let pairs: Vec<(String, String)> = links
                .iter()
                .filter(|(k, ..)| *k == kind)
                .map(|(_, owner, user)| (owner.clone(), user.clone()))
                .collect();
            store::link(&mut *tx, kind, &pairs, now).await?;
        }
        for candidate in &updates {
            user_store::update(&mut *tx, &candidate.user).await?;
        }
        let client = Some(self.client.id.as_str());
        let mut published: Vec<(&'static str, Value)> =
            creates.iter().map(|c| (EventType::UserCreated.as_str(), events::user_data(&c.user, client))).collect();
        published.extend(updates.iter().map(|c| (EventType::UserUpdated.as_str(), events::user_data(&c.user, client))));
        // The apps rows bring: an app a person has already is kept once.
        for candidate in creates.iter().chain(&updates) {
            let user = &candidate.user;
            for factor in &candidate.factors {
                let authenticator = factor.authenticator(self.context, &user.realm_id, &user.id, now);
                if crate::store::authenticators::insert(&mut *tx, &authenticator).await? {
                    let data = json!({
                        "user_id": user.id, "username": user.username, "authenticator_id": authenticator.id,
                        "kind": authenticator.kind.as_str(), "name": authenticator.name, "by": "administrator",
                    });
                    published.push((EventType::AuthenticatorAdded.as_str(), data));
                }
            }
        }
        let place = (self.job.account_id.as_str(), self.job.realm_id.as_str(), self.job.client_id.as_str());
        events::publish_many(&mut *tx, place, &published, now).await?;
        store::insert_refusals(&mut *tx, &self.job.id, &refusals).await?;
        self.job.created += i64::try_from(creates.len()).unwrap_or(i64::MAX);
        self.job.updated += i64::try_from(updates.len()).unwrap_or(i64::MAX);
        self.job.refused += i64::try_from(refusals.len()).unwrap_or(i64::MAX);
        self.job.updated_at = now;
        store::save_progress(&mut *tx, &self.job).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Ends the import: Completed, or Failed with `failure`; its change is trailed with no
    /// `resource_id` (it touched many people) and the counts in its details.
    pub async fn finish(mut self, failure: Option<String>) -> Result<Finished, Error> {
        let now = self.context.clock.now();
        self.job.status = if failure.is_some() { ImportStatus::Failed } else { ImportStatus::Completed };
        self.job.failure = failure;
        self.job.updated_at = now;
        self.job.finished_at = Some(now);
        if let Some(mut refusals) = self.dry_run {
            refusals.sort_by_key(|refusal| refusal.line);
            return Ok(Finished { job: self.job, dry_run_refusals: Some(refusals) });
        }
        let mut tx = self.context.store.begin().await?;
        store::save_progress(&mut *tx, &self.job).await?;
        let place = Place::in_realm(ResourceKind::User, "", &self.job.realm_id).of_client(&self.job.client_id);
        let mut change = Change::of(ChangeAction::Create, place, 200).details(json!({
            "import_id": self.job.id,
            "status": self.job.status.as_str(),
            "rows_read": self.job.rows_read,
            "created": self.job.created,
            "updated": self.job.updated,
            "skipped": self.job.skipped,
            "refused": self.job.refused,
        }));
        (change.resource_id, change.parent_id) = (None, None);
        changes::commit(self.context, self.by, tx, change).await?;
        // Imported hashes may cost more than the realm's others: its refusals are evened out anew.
        self.context.passwords.refusal_floors.forget(&self.job.realm_id);
        Ok(Finished { job: self.job, dry_run_refusals: None })
    }

    /// Reads one row into a person; the problems of its fields otherwise.
    fn read(&self, line: i64, row: Value, now: DateTime<Utc>) -> Result<Candidate, Vec<Notification>> {
        let Value::Object(fields) = row else {
            return Err(vec![Notification::new("", Rule::Type, "a row must be a JSON object")]);
        };
        let mut body = Body::from_map(fields);
        let mut given = Given::default();
        let name = body.required("username", username);
        let mail = body.nullable("email", parsed(email));
        given.email = mail.is_some();
        let short = |path: &str, value: &Value| text(0, 255)(path, value);
        let first_name = body.nullable("firstName", short);
        let last_name = body.nullable("lastName", short);
        (given.first_name, given.last_name) = (first_name.is_some(), last_name.is_some());
        let confirmed = body.optional("emailConfirmed", boolean);
        let status = body.optional("status", one_of(UserStatus::NAMES));
        (given.email_confirmed, given.status) = (confirmed.is_some(), status.is_some());
        let password_hash = body.nested("passwordHash").and_then(|mut hash| {
            let stored = read_hash(&mut hash);
            body.absorb(hash);
            stored
        });
        given.password = password_hash.is_some();
        let factors = body.optional("totp", super::factors::read).unwrap_or_default();
        let mut links = Vec::new();
        let lists = [
            ("roles", Link::Role, &self.directory.realm_roles, "realm role"),
            ("groups", Link::Group, &self.directory.groups, "group"),
            ("organizations", Link::Organization, &self.directory.organizations, "organization"),
        ];
        for (field, link, known, what) in lists {
            let names = body.optional(field, list_of(100, text(1, 255))).unwrap_or_default();
            for (index, name) in names.iter().enumerate() {
                match known.get(name) {
                    Some(id) => links.push((link, id.clone())),
                    None => body.refuse(
                        &format!("{field}[{index}]"),
                        Rule::NotFound,
                        format!("the realm has no {what} named {name}"),
                    ),
                }
            }
        }
        // `clientRoles`: names of the client's roles, or names by client for any client's.
        let client_roles = match body.optional("clientRoles", |_, value| Ok(value.clone())) {
            None => Vec::new(),
            Some(Value::Object(by_client)) => {
                by_client.into_iter().map(|(client, names)| (format!("clientRoles.{client}"), client, names)).collect()
            }
            Some(names) => vec![("clientRoles".to_owned(), self.client.id.to_string(), names)],
        };
        for (field, client, names) in client_roles {
            let Ok(names) = list_of(100, text(1, 255))(&field, &names) else {
                body.refuse(&field, Rule::Type, format!("{field} must be a list of role names"));
                continue;
            };
            for (index, name) in names.iter().enumerate() {
                match self.directory.client_roles.get(&format!("{client}/{name}")) {
                    Some(id) => links.push((Link::Role, id.clone())),
                    None => body.refuse(
                        &format!("{field}[{index}]"),
                        Rule::NotFound,
                        format!("the client {client} has no role named {name}"),
                    ),
                }
            }
        }
        let problems = match body.finish() {
            Ok(()) => Vec::new(),
            Err(crate::kernel::validate::Refused(problems)) => problems,
        };
        let Some(username) = name.filter(|_| problems.is_empty()) else { return Err(problems) };
        let user = User {
            id: UserId::fresh(),
            realm_id: self.client.realm_id.clone(),
            username,
            email: mail.flatten(),
            first_name: first_name.flatten().filter(|n| !n.is_empty()),
            last_name: last_name.flatten().filter(|n| !n.is_empty()),
            email_confirmed: confirmed.unwrap_or(false),
            status: status.unwrap_or(UserStatus::Active),
            password_hash,
            must_change_password: false,
            created_at: now,
            updated_at: now,
        };
        Ok(Candidate { line, user, given, links, factors })
    }

    /// Splits the batch's people into those to create and those to overwrite, skipping or
    /// refusing the conflicts as the job says. A person is known to the import when the realm has
    /// them or an earlier row of the import named them (in a dry run, where nothing is written,
    /// rows of earlier batches too), and a row naming a known person is a conflict either way, so a
    /// dry run and the import answer alike, whatever the batches.
    async fn sort(
        &mut self,
        candidates: Vec<Candidate>,
        refusals: &mut Vec<Refusal>,
    ) -> Result<(Vec<Candidate>, Vec<Candidate>), Error> {
        let usernames: Vec<String> = candidates.iter().map(|c| c.user.username.clone()).collect();
        let emails: Vec<String> =
            candidates.iter().filter_map(|c| c.user.email.as_ref().map(|e| e.to_lowercase())).collect();
        let existing = store::existing(&self.context.store, &self.job.realm_id, &usernames, &emails).await?;
        let by_name: HashMap<&str, &User> = existing.iter().map(|u| (u.username.as_str(), u)).collect();
        let by_email: HashMap<String, &User> =
            existing.iter().filter_map(|u| u.email.as_ref().map(|e| (e.to_lowercase(), u))).collect();
        let (names_seen, emails_seen) = (&mut self.names_seen, &mut self.emails_seen);
        let (mut creates, mut updates): (Vec<Candidate>, Vec<Candidate>) = (Vec::new(), Vec::new());
        // Where each row of this batch taken so far went: the people to create, by line.
        let mut taken: HashMap<i64, usize> = HashMap::new();
        for mut candidate in candidates {
            let email = candidate.user.email.as_ref().map(|e| e.to_lowercase());
            let named = match by_name.get(candidate.user.username.as_str()) {
                Some(user) => Some(Known::Stored(user)),
                None => names_seen.get(&candidate.user.username).map(|line| Known::Row(*line)),
            };
            let mailed = match email.as_ref().and_then(|e| by_email.get(e)) {
                Some(user) => Some(Known::Stored(user)),
                None => email.as_ref().and_then(|e| emails_seen.get(e)).map(|line| Known::Row(*line)),
            };
            let email_elsewhere = mailed.as_ref().is_some_and(|owner| named.as_ref().is_none_or(|n| !n.same(owner)));
            let policy = self.job.on_conflict;
            let refused = match (&named, email_elsewhere, policy) {
                (None, false, _) => {
                    names_seen.insert(candidate.user.username.clone(), candidate.line);
                    if let Some(email) = email {
                        emails_seen.insert(email, candidate.line);
                    }
                    taken.insert(candidate.line, creates.len());
                    creates.push(candidate);
                    continue;
                }
                (_, _, OnConflict::Skip) => {
                    self.job.skipped += 1;
                    continue;
                }
                (_, true, _) => {
                    Notification::new("email", Rule::Duplicate, "another person of the realm has this e-mail address")
                }
                (Some(_), false, OnConflict::Fail) => {
                    Notification::new("username", Rule::Duplicate, "a person of the realm has this username")
                }
                (Some(known), false, OnConflict::Overwrite) => {
                    if let Some(email) = email {
                        emails_seen.insert(email, candidate.line);
                    }
                    match known {
                        Known::Stored(person) => {
                            candidate.user = overwrite(person, &candidate);
                            updates.push(candidate);
                        }
                        // A person an earlier row of this batch creates: the row's fields go over theirs.
                        Known::Row(line) => {
                            if let Some(earlier) = taken.get(line).and_then(|index| creates.get_mut(*index)) {
                                earlier.user = overwrite(&earlier.user, &candidate);
                                earlier.links.append(&mut candidate.links);
                            }
                            self.job.updated += 1;
                        }
                    }
                    continue;
                }
            };
            refusals.push(refusal(candidate.line, Some(&candidate.user.username), &[refused]));
        }
        Ok((creates, updates))
    }
}

/// A person the import knows: one the realm has, or one an earlier row named.
enum Known<'u> {
    Stored(&'u User),
    Row(i64),
}

impl Known<'_> {
    fn same(&self, other: &Known<'_>) -> bool {
        match (self, other) {
            (Self::Stored(a), Known::Stored(b)) => a.id == b.id,
            (Self::Row(a), Known::Row(b)) => a == b,
            _ => false,
        }
    }
}

/// `person` with the fields the row gave written over theirs.
fn overwrite(person: &User, candidate: &Candidate) -> User {
    let (row, given) = (&candidate.user, candidate.given);
    let mut user = person.clone();
    if given.email {
        user.email.clone_from(&row.email);
    }
    if given.first_name {
        user.first_name.clone_from(&row.first_name);
    }
    if given.last_name {
        user.last_name.clone_from(&row.last_name);
    }
    if given.email_confirmed {
        user.email_confirmed = row.email_confirmed;
    }
    if given.status {
        user.status = row.status;
    }
    if given.password {
        user.password_hash.clone_from(&row.password_hash);
    }
    user.updated_at = row.updated_at;
    user
}

/// The stored form of a row's `passwordHash`: `{algorithm, value, salt?, iterations?, saltPosition?}`.
fn read_hash(hash: &mut Body) -> Option<String> {
    const ALGORITHMS: &[(&str, &str)] = &[
        ("bcrypt", "bcrypt"),
        ("argon2", "argon2"),
        ("pbkdf2-sha512", "pbkdf2-sha512"),
        ("pbkdf2-sha256", "pbkdf2-sha256"),
        ("pbkdf2", "pbkdf2"),
        ("sha256", "sha256"),
    ];
    let algorithm = hash.required("algorithm", one_of(ALGORITHMS));
    let value = hash.required("value", text(1, 1024));
    let salt = hash.optional("salt", text(0, 1024)).unwrap_or_default();
    let iterations = hash.optional("iterations", integer(1, i64::from(u32::MAX)));
    let salt_first = hash.optional("saltPosition", one_of(&[("prefix", true), ("suffix", false)])).unwrap_or(true);
    let (algorithm, value) = (algorithm?, value?);
    let exported = match algorithm {
        "bcrypt" => Exported::Bcrypt(&value),
        "argon2" => Exported::Argon2(&value),
        "sha256" => Exported::Sha256 { value: &value, salt: &salt, salt_first },
        pbkdf2 => {
            let Some(iterations) = iterations.and_then(|n| u32::try_from(n).ok()) else {
                hash.refuse("iterations", Rule::Required, format!("a {pbkdf2} hash needs its iterations"));
                return None;
            };
            let digest = Pbkdf2Digest::named(pbkdf2).unwrap_or(Pbkdf2Digest::Sha256);
            if iterations > digest.max_iterations() {
                let most = digest.max_iterations();
                hash.refuse("iterations", Rule::Range, format!("a {pbkdf2} hash has at most {most} iterations"));
                return None;
            }
            Exported::Pbkdf2 { digest, value: &value, salt: &salt, iterations }
        }
    };
    match imported::stored_form(&exported) {
        Ok(stored) => Some(stored),
        Err(why) => {
            hash.refuse("value", Rule::Format, why);
            None
        }
    }
}

fn refusal(line: i64, username: Option<&str>, problems: &[Notification]) -> Refusal {
    Refusal {
        line,
        username: username.map(str::to_owned),
        reasons: serde_json::to_string(problems).unwrap_or_else(|_| "[]".into()),
    }
}

/// The realm's roles (and the client's), groups and organizations by name.
async fn directory(context: &Context, client: &Client) -> Result<Directory, Error> {
    let names = store::names(context.store.pool(), &client.realm_id).await?;
    let mut directory = Directory::default();
    for (kind, name, id) in names {
        let map = match kind.as_str() {
            "realm_role" => &mut directory.realm_roles,
            "client_role" => &mut directory.client_roles,
            "group" => &mut directory.groups,
            _ => &mut directory.organizations,
        };
        map.insert(name, id);
    }
    Ok(directory)
}

/// Reads a whole JSON document: an array of rows, or `{"users": [...]}`.
pub fn rows_of_document(document: Value) -> Result<Vec<Row>, Error> {
    let rows = match document {
        Value::Array(rows) => rows,
        Value::Object(mut fields) if fields.len() == 1 && fields.contains_key("users") => {
            match fields.remove("users") {
                Some(Value::Array(rows)) => rows,
                _ => return Err(Error::invalid("users", Rule::Type, "users must be an array of rows")),
            }
        }
        _ => return Err(Error::invalid("", Rule::Type, "the body must be an array of rows or {\"users\": [...]}")),
    };
    Ok(rows.into_iter().zip(1..).map(|(row, position)| (position, Ok(row))).collect())
}

/// The `reasons` of a refused row, as stored.
pub fn reasons(refusal: &Refusal) -> Value {
    serde_json::from_str(&refusal.reasons).unwrap_or_else(|_| Value::Array(Vec::new()))
}
