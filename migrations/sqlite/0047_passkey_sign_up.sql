-- A realm may let people sign up with a passkey and no password.
ALTER TABLE realms ADD COLUMN passkey_sign_up INTEGER NOT NULL DEFAULT 0;
-- A sign-up with a passkey keeps the passkey its browser made until the code sent to the address
-- comes back: the id the account will have (the passkey's user handle) and the passkey as
-- `authenticators` keeps it (JSON). Its password_hash is empty: the account has no password.
ALTER TABLE sign_ups ADD COLUMN user_id TEXT;
ALTER TABLE sign_ups ADD COLUMN passkey TEXT;
