-- The digest of the source file of each memory a hook delivered, as it was when sent: a memory
-- edited since then is sent again. '' (marks from before, and memories a host loaded from a
-- native rule file) is a mark that holds for any text.
BEGIN;
ALTER TABLE delivered ADD COLUMN digest TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 4;
COMMIT;
