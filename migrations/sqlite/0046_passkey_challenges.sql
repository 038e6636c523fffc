-- The passkey challenges answered, by the nonce inside each, until the challenge expires: a
-- challenge is accepted once, whichever host of the deployment it comes back to.
CREATE TABLE passkey_challenges (
    nonce      TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
