//! The directory: realms, clients, people, groups, roles, scopes, organizations, resource servers,
//! providers, sessions, secrets and the team. A change to any of them is one function here that
//! checks it, writes it, trails it and announces it to the other hosts, whichever edge asks for
//! it: the admin API, the console, the configuration import, a client registering itself, or a
//! client known by its metadata document.

pub mod clients;
pub mod people;
