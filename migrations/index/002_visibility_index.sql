-- Small indexes scanned instead of every row with its body: the columns of the
-- visibility rule (match.HIDDEN_SQL), read on every load; the `applies_to` globs,
-- read on every file event of a hook; and the `depends_on` references, checked
-- for unknown ids and cycles by every `engram index` and `check`.
-- `strong` goes: the anchor rule asks FTS5 for the strong columns instead.
BEGIN;
ALTER TABLE memories DROP COLUMN strong;
CREATE INDEX memories_visibility ON memories (ignored, confidence, lifecycle, valid_until, roles);
CREATE INDEX memories_paths ON memories (applies_to) WHERE applies_to != '[]';
CREATE INDEX memories_references ON memories (id, rel, depends_on);
PRAGMA user_version = 2;
COMMIT;
