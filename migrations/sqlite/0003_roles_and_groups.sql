-- Realm roles, client roles (exclusive to one client), groups, and who holds what.
-- A person's effective roles are the roles held directly and through every group they are in.

CREATE TABLE realm_roles (
    id           TEXT PRIMARY KEY,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    -- NULL for a realm role; the owning client for a client role.
    client_id    TEXT,
    name         TEXT NOT NULL,
    description  TEXT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX realm_roles_unique_realm_name ON realm_roles (realm_id, name) WHERE client_id IS NULL;
CREATE UNIQUE INDEX realm_roles_unique_client_name ON realm_roles (realm_id, client_id, name) WHERE client_id IS NOT NULL;
CREATE INDEX realm_roles_by_creation ON realm_roles (realm_id, created_at);

CREATE TABLE user_roles (
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id     TEXT NOT NULL REFERENCES realm_roles (id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (user_id, role_id)
);
CREATE INDEX user_roles_by_role ON user_roles (role_id);

CREATE TABLE groups (
    id           TEXT PRIMARY KEY,
    realm_id     TEXT NOT NULL REFERENCES realms (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    description  TEXT,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (realm_id, name)
);
CREATE INDEX groups_by_creation ON groups (realm_id, created_at);

CREATE TABLE group_members (
    group_id    TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX group_members_by_user ON group_members (user_id);

CREATE TABLE group_roles (
    group_id    TEXT NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
    role_id     TEXT NOT NULL REFERENCES realm_roles (id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (group_id, role_id)
);

-- Roles granted to a client itself; its client-credentials tokens carry them.
CREATE TABLE client_roles (
    realm_id    TEXT NOT NULL,
    client_id   TEXT NOT NULL,
    role_id     TEXT NOT NULL REFERENCES realm_roles (id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (realm_id, client_id, role_id),
    FOREIGN KEY (realm_id, client_id) REFERENCES clients (realm_id, id) ON DELETE CASCADE
);
