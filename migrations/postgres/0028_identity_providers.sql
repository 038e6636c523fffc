-- External identity providers of a realm: OpenID Connect providers found from their discovery
-- address, and plain OAuth 2.0 providers that read the person from a user-info address. The id is
-- chosen by the realm's administrators (it is what `idp_hint` names); the client secret is sealed
-- with the service's secret key, never stored in the clear.
CREATE TABLE identity_providers (
    realm_id            TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    id                  TEXT NOT NULL,
    display_name        TEXT NOT NULL,
    -- OpenIdConnect or OAuth2.
    protocol            TEXT NOT NULL,
    status              TEXT NOT NULL,
    discovery_url       TEXT,
    authorization_url   TEXT,
    token_url           TEXT,
    userinfo_url        TEXT,
    client_id           TEXT NOT NULL,
    client_secret       TEXT,
    client_secret_last_four TEXT,
    -- JSON list of the scopes asked for upstream.
    scopes              TEXT NOT NULL,
    -- JSON object: the upstream claim read for each of username, email, emailVerified, givenName,
    -- familyName.
    claims              TEXT NOT NULL,
    -- Whether an e-mail address the provider says is verified may link to an existing person.
    trust_verified_email BOOLEAN NOT NULL,
    -- JSON list of {claim, value, roles, groups}: roles and groups (by name) given at each sign-in
    -- to a person whose upstream claim holds the value.
    role_mappings       TEXT NOT NULL,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL,
    PRIMARY KEY (realm_id, id)
);
CREATE INDEX identity_providers_by_creation ON identity_providers (realm_id, created_at);

-- The providers a client's login page offers, in the order of its buttons.
CREATE TABLE client_identity_providers (
    realm_id     TEXT NOT NULL,
    client_id    TEXT NOT NULL,
    provider_id  TEXT NOT NULL,
    position     BIGINT NOT NULL,
    PRIMARY KEY (realm_id, client_id, provider_id),
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE,
    FOREIGN KEY (realm_id, provider_id) REFERENCES identity_providers (realm_id, id) ON DELETE CASCADE
);

-- The providers of an organization, chosen for a person whose e-mail domain is the organization's.
CREATE TABLE organization_identity_providers (
    realm_id         TEXT NOT NULL,
    organization_id  TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    provider_id      TEXT NOT NULL,
    position         BIGINT NOT NULL,
    PRIMARY KEY (organization_id, provider_id),
    FOREIGN KEY (realm_id, provider_id) REFERENCES identity_providers (realm_id, id) ON DELETE CASCADE
);

-- A person of the realm as an identity provider knows them: the provider's subject, linked once,
-- found again at every later sign-in through it.
CREATE TABLE federated_identities (
    realm_id      TEXT NOT NULL,
    provider_id   TEXT NOT NULL,
    subject       TEXT NOT NULL,
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (realm_id, provider_id, subject),
    FOREIGN KEY (realm_id, provider_id) REFERENCES identity_providers (realm_id, id) ON DELETE CASCADE
);
CREATE INDEX federated_identities_by_user ON federated_identities (user_id);
