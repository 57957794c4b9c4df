-- Safety verdicts of texts this engram has screened, by the digest of the printed text
-- (`text_sha256`): a text screened before is not screened again. A text changed in any way has
-- another digest, so it is screened anew; `screen` fingerprints the screen's rules.
BEGIN;
CREATE TABLE screened (
    digest TEXT NOT NULL,
    screen TEXT NOT NULL,
    label TEXT,                 -- NULL: clean
    PRIMARY KEY (digest, screen)
) WITHOUT ROWID;
PRAGMA user_version = 2;
COMMIT;
