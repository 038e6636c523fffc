-- The account's team and its operational notifications (SPEC "Account", "Notification webhooks").

-- Invitations to join the team, sent by e-mail. The token is stored as a keyed hash only; an
-- invitation is used once, and lapses after its expiry.
CREATE TABLE account_invitations (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email             TEXT NOT NULL,
    -- JSON list of account roles the person gets on accepting.
    roles             TEXT NOT NULL,
    token_hash        TEXT NOT NULL UNIQUE,
    -- Who invited: a person's id, or the credential's id when a credential acting for no one did.
    invited_by        TEXT NOT NULL,
    created_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL,
    accepted_at       BIGINT,
    accepted_user_id  TEXT,
    revoked_at        BIGINT
);
CREATE INDEX account_invitations_by_account ON account_invitations (account_id, created_at);

-- What the account owner chose in Preferences.
CREATE TABLE account_notification_preferences (
    account_id        TEXT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    -- Where operational notifications are posted (unsigned); none when NULL.
    webhook_url       TEXT,
    -- InConsole, EmailAndWebhook or Off.
    attacks_detected  TEXT NOT NULL,
    updated_at        BIGINT NOT NULL
);

-- Operational notifications shown in the console and, when a webhook URL was set at the time they
-- were raised, posted to it. Posting is tracked here, apart from the webhook delivery history.
CREATE TABLE account_notifications (
    id                 TEXT PRIMARY KEY,
    account_id         TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    type               TEXT NOT NULL,
    -- Info, Warning or Critical.
    severity           TEXT NOT NULL,
    title              TEXT NOT NULL,
    description        TEXT NOT NULL,
    resource_id        TEXT,
    realm_id           TEXT,
    created_at         BIGINT NOT NULL,
    -- None (no URL), Pending, Sent or Failed.
    post_status        TEXT NOT NULL,
    post_url           TEXT,
    post_attempts      BIGINT NOT NULL,
    post_next_at       BIGINT,
    -- A worker's lease on the post, so two hosts never post it at once.
    post_claimed_until BIGINT,
    post_last_error    TEXT
);
CREATE INDEX account_notifications_by_account ON account_notifications (account_id, created_at);
CREATE INDEX account_notifications_due ON account_notifications (post_status, post_next_at);
