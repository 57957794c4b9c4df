-- The columns of the visibility rule (match.HIDDEN_SQL), so a load finds the hidden
-- memories by scanning this small index instead of every row with its body.
BEGIN;
CREATE INDEX memories_visibility ON memories (ignored, confidence, lifecycle, valid_until, roles);
PRAGMA user_version = 2;
COMMIT;
