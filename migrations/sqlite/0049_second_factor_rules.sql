-- When a sign-in asks for a second factor: a realm's rule (Never, WhenEnrolled, Always,
-- PhishingResistant), and a client's own, stricter one where it has one (NULL: its realm's).
ALTER TABLE realms ADD COLUMN second_factor TEXT NOT NULL DEFAULT 'WhenEnrolled';
ALTER TABLE clients ADD COLUMN second_factor TEXT;
