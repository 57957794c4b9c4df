-- state.db: mutable runtime state (fetch counts, hook sessions); never shared.
BEGIN;
CREATE TABLE fetches (
    scope TEXT NOT NULL,
    id TEXT NOT NULL,
    count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, id)
);
CREATE TABLE sessions (
    host TEXT NOT NULL,
    session TEXT NOT NULL,
    last_prompt TEXT,
    updated REAL NOT NULL,
    PRIMARY KEY (host, session)
);
CREATE TABLE delivered (
    host TEXT NOT NULL,
    session TEXT NOT NULL,
    agent TEXT NOT NULL DEFAULT '',
    memory TEXT NOT NULL,       -- "<scope>:<id>"
    PRIMARY KEY (host, session, agent, memory)
);
PRAGMA user_version = 1;
COMMIT;
