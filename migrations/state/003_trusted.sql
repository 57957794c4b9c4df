-- Shared index files whose signature was checked against a pinned key (`trust.check_pinned`),
-- by the SHA-256 of the whole file: a file changed in any way has another digest and is checked
-- again, so `cryptography` is imported only when a shared index changes.
BEGIN;
CREATE TABLE trusted (
    digest TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (digest, key)
) WITHOUT ROWID;
PRAGMA user_version = 3;
COMMIT;
