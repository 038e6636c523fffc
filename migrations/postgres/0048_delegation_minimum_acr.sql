-- A delegation grant may ask for a level of assurance (an `acr`: 1, 2, phr or phrh): the person's
-- sign-in behind the subject token must have reached it.
ALTER TABLE delegation_grants ADD COLUMN minimum_acr TEXT;
