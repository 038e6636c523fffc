//! `/account`: the caller's account, its team (people who sign in to the console at the platform
//! realm) with their account roles, invitations by e-mail, notification preferences and the
//! operational notifications. Reading needs `account:read`, changing `account:update`. Changes are
//! in the trail and publish no event (they happen outside any realm).

mod invitations;
mod notifications;
mod team;

pub use invitations::*;
pub use notifications::*;
pub use team::*;
