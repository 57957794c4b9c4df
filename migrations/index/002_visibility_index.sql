-- Small indexes the read path scans instead of every row with its body:
-- the columns of the visibility rule (match.HIDDEN_SQL), read on every load,
-- and the `applies_to` globs, read on every file event of a hook.
BEGIN;
CREATE INDEX memories_visibility ON memories (ignored, confidence, lifecycle, valid_until, roles);
CREATE INDEX memories_paths ON memories (applies_to) WHERE applies_to != '[]';
PRAGMA user_version = 2;
COMMIT;
