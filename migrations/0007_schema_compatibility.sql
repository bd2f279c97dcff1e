-- 0007: upgrades without an outage (docs/OPERATIONS.md "Rolling upgrades").
-- compatible-with: 6
--
-- Each migration from this one on records the oldest build schema it keeps working for:
-- the `-- compatible-with: N` header of its file (an expand migration), or its own version
-- when it has none (a contract migration). A build at schema E then runs on a database at
-- V > E while every migration after E keeps E working (common/xg_migrate.h,
-- xg_schema_verdict). The rows before 0007 keep NULL: each counts as its own version.
--
-- Builds at schema 6 do not read the column (they ignore it), but they compare versions
-- for equality: they see 7 and refuse ("run a newer build"). The range applies from 7 on.
ALTER TABLE schema_migrations ADD COLUMN compatible_with int
    CHECK (compatible_with BETWEEN 1 AND version);
