-- index.db: a pure function of the memory sources; rebuilt when the schema changes.
BEGIN;
PRAGMA application_id = 1701728114;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- Every source file seen, valid or not, so `check` can name it and `index` can skip it unchanged.
CREATE TABLE files (
    rel TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    sha256 TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'invalid')),
    error TEXT,
    memory INTEGER
);
CREATE TABLE memories (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    rel TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    authority TEXT NOT NULL,
    confidence TEXT NOT NULL,
    lifecycle TEXT NOT NULL,
    level INTEGER NOT NULL,
    valid_until TEXT,
    roles TEXT NOT NULL,        -- JSON list
    tags TEXT NOT NULL,         -- JSON list
    directive TEXT NOT NULL,
    summary TEXT NOT NULL,
    title TEXT NOT NULL,
    triggers TEXT NOT NULL,     -- JSON list
    applies_to TEXT NOT NULL,   -- JSON list
    depends_on TEXT NOT NULL,   -- JSON list, as written
    updated TEXT,
    body TEXT NOT NULL,         -- agent-visible body
    text_sha256 TEXT NOT NULL,  -- digest of everything printed: title, directive, summary, body
    source_sha256 TEXT NOT NULL,
    tokens INTEGER NOT NULL,    -- estimated tokens of the body
    strong TEXT NOT NULL,       -- index terms of id, tags, directive and applies_to
    ignored INTEGER NOT NULL DEFAULT 0,
    safety TEXT                 -- screening label, NULL when clean
);
CREATE TABLE edges (
    src TEXT NOT NULL,
    dst TEXT NOT NULL,
    kind TEXT NOT NULL,         -- depends_on | related
    weight REAL NOT NULL DEFAULT 1.0,
    PRIMARY KEY (src, dst, kind)
);
-- Contentless: the term streams are recomputed from `memories` when a row is deleted.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    id, tags, directive, summary, triggers, body, paths,
    content='', tokenize='unicode61 remove_diacritics 0'
);
PRAGMA user_version = 1;
COMMIT;
