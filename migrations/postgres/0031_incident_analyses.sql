-- The incident analyst: the figures each measure was taken on, the realm's consent, the readings
-- of incidents and the recommended changes applied from them.

-- What the counters held when a measure was taken (JSON: sourceFailures, sourceAccounts,
-- unknownAccountFailures, earlierBlocks, datacenter, tor); NULL for measures taken before.
ALTER TABLE threat_measures ADD COLUMN factors TEXT;

-- "Let the AI advisor analyse this realm".
ALTER TABLE realms ADD COLUMN ai_advisor BOOLEAN NOT NULL DEFAULT FALSE;

-- One reading per incident and moment (Opened, TurnedCritical, Closed).
CREATE TABLE threat_analyses (
    id               TEXT PRIMARY KEY,
    incident_id      TEXT NOT NULL REFERENCES threat_incidents (id) ON DELETE CASCADE,
    account_id       TEXT NOT NULL,
    realm_id         TEXT NOT NULL,
    moment           TEXT NOT NULL,
    -- The incident's severity when the reading was scheduled.
    severity         TEXT NOT NULL,
    -- Running, Completed or Failed.
    status           TEXT NOT NULL,
    -- Which analyst wrote it: the component, or the language model by its name.
    produced_by      TEXT,
    -- Why the language model's answer was not used, when it was asked and the component answered.
    model_failure    TEXT,
    classification   TEXT,
    confidence       BIGINT,
    -- JSON list of {change, value}.
    recommendations  TEXT,
    -- JSON object: per language tag, the reading's words.
    texts            TEXT,
    -- Why a failed reading failed.
    failure          TEXT,
    created_at       BIGINT NOT NULL,
    -- The latest run, first or retried: the account's daily quota counts runs by it.
    ran_at           BIGINT NOT NULL,
    runs             BIGINT NOT NULL,
    UNIQUE (incident_id, moment)
);
CREATE INDEX threat_analyses_by_account ON threat_analyses (account_id, ran_at);

-- A recommended change applied to the realm, and its revert.
CREATE TABLE threat_analysis_actions (
    id              TEXT PRIMARY KEY,
    analysis_id     TEXT NOT NULL REFERENCES threat_analyses (id) ON DELETE CASCADE,
    recommendation  BIGINT NOT NULL,
    account_id      TEXT NOT NULL,
    realm_id        TEXT NOT NULL,
    change          TEXT NOT NULL,
    -- JSON values: the one set, and the one it replaced (what a revert restores).
    applied_value   TEXT NOT NULL,
    previous_value  TEXT NOT NULL,
    applied_at      BIGINT NOT NULL,
    applied_by      TEXT NOT NULL,
    reverted_at     BIGINT,
    reverted_by     TEXT
);
CREATE INDEX threat_analysis_actions_by_analysis ON threat_analysis_actions (analysis_id, recommendation);
