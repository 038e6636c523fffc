//! Webhook endpoints: client endpoints at
//! `/realms/{realm}/clients/{client}/webhooks` hear the client's user, sign-in, token, key and
//! suspension events; realm endpoints at `/realms/{realm}/webhooks` hear administrative changes
//! and attacks. Registering a client endpoint requires `client:write`; a realm endpoint
//! `webhook:create`. Reading needs `webhook:read`, changing `webhook:update`, removing
//! `webhook:delete`. The signing secret is shown once, right after creation or rotation, and only
//! to holders of `secret:read`.

use crate::operations::webhooks::figures::EventView;
use crate::operations::webhooks::figures::MetricsView;

use crate::http::envelope::Answer;

pub(crate) mod figures;
mod routes;

pub use self::routes::*;
use crate::operations::admin::webhooks::{
    delete_endpoint, deliveries, list_endpoints, read_endpoint, register, replay, rotate, test, update_endpoint,
};
use crate::operations::webhooks::endpoints::{AttemptView, EndpointInput, EndpointView};
