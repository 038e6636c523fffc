-- Self sign-up: whether the realm's login page lets people create their own account.
ALTER TABLE realms ADD COLUMN self_sign_up INTEGER NOT NULL DEFAULT 0;
