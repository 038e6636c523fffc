-- Self sign-up: whether the realm's login page lets people create their own account.
ALTER TABLE realms ADD COLUMN self_sign_up BOOLEAN NOT NULL DEFAULT FALSE;
