-- Named queries of xmrgate-gateway (prepared once per connection by name).

-- name: gw_tenants_count
-- idempotent: a read
-- Sizes the in-memory tables before the full load (tenants_reserve).
SELECT count(*) FROM tenants;

-- name: gw_tenants_copy
-- idempotent: a read
-- The full load: gw_tenant_by_id's columns in COPY's binary format (gateway/state/pgsync.c),
-- every integer as int8 and valid_until as the timestamptz itself (the gateway converts it:
-- extract()'s numeric was most of PostgreSQL's time for a million rows). COPY cannot be
-- prepared, so it is sent as text.
COPY (SELECT t.id::int8, t.token_hash, t.digest_ha1, t.handle, t.tier_id, r.burst_rps::int8,
             r.daily_quota::int8, t.valid_until,
             t.state = 'suspended', r.burst_size::int8
        FROM tenants t JOIN tiers r ON r.id = t.tier_id) TO STDOUT (FORMAT binary);

-- name: gw_tenant_by_id
-- idempotent: a read
SELECT t.id, encode(t.token_hash, 'hex'), encode(t.digest_ha1, 'hex'), t.handle, t.tier_id,
       r.burst_rps, r.daily_quota, extract(epoch FROM t.valid_until)::bigint,
       t.state = 'suspended', r.burst_size
  FROM tenants t JOIN tiers r ON r.id = t.tier_id
 WHERE t.id = $1::bigint;

-- name: gw_tenants_by_tier
-- idempotent: a read
SELECT t.id, encode(t.token_hash, 'hex'), encode(t.digest_ha1, 'hex'), t.handle, t.tier_id,
       r.burst_rps, r.daily_quota, extract(epoch FROM t.valid_until)::bigint,
       t.state = 'suspended', r.burst_size
  FROM tenants t JOIN tiers r ON r.id = t.tier_id
 WHERE t.tier_id = $1;

-- name: gw_nodes_enabled
-- idempotent: a read
-- The last column is the row's revision: any UPDATE of the row (the operator's re-enable of
-- a node dropped after its failure ceiling) changes it and resets the node's health state.
-- broadcast and max_connections: NULL (by class) reads as '' (migrations/0003).
SELECT id, name, url, priority, pruned, (extract(epoch FROM updated_at) * 1000000)::bigint,
       broadcast, max_connections
  FROM nodes
 WHERE enabled
 ORDER BY CASE priority WHEN 'primary' THEN 0 WHEN 'standby' THEN 1 ELSE 2 END, id;

-- name: gw_usage_add
-- One flush of a replica's local quota counts: adds each (tenant, day, amount) and returns
-- the new totals, which every replica's flushes share. Rows are inserted in key order so
-- two replicas flushing the same tenants cannot deadlock; counts of a tenant deleted
-- meanwhile are dropped by the join instead of failing the whole flush.
-- Regions (migrations/0006): in the primary's database (xmrgate.region unset) the counts
-- go to usage_daily; in a region that follows it by logical replication (ALTER DATABASE …
-- SET xmrgate.region = 'b') to that region's usage_regional rows, which it publishes back.
-- Either way the total returned is usage_daily plus every region's rows: the quota holds
-- across regions, each region seeing the others as of its replication lag.
WITH here AS (
    SELECT coalesce(current_setting('xmrgate.region', true), '') AS region
), counts AS (
    SELECT r.tenant_id, DATE '1970-01-01' + r.day AS day, r.amount
      FROM unnest($1::bigint[], $2::integer[], $3::bigint[]) AS r(tenant_id, day, amount)
      JOIN tenants t ON t.id = r.tenant_id
), home AS (
    INSERT INTO usage_daily AS u (tenant_id, day, used)
    SELECT c.tenant_id, c.day, c.amount FROM counts c, here WHERE here.region = ''
     ORDER BY c.tenant_id, c.day
        ON CONFLICT (tenant_id, day) DO UPDATE SET used = u.used + EXCLUDED.used
    RETURNING u.tenant_id, u.day, u.used
), away AS (
    INSERT INTO usage_regional AS u (region, tenant_id, day, used)
    SELECT here.region, c.tenant_id, c.day, c.amount FROM counts c, here WHERE here.region <> ''
     ORDER BY c.tenant_id, c.day
        ON CONFLICT (tenant_id, day, region) DO UPDATE SET used = u.used + EXCLUDED.used
    RETURNING u.tenant_id, u.day, u.used
)
SELECT a.tenant_id, a.day - DATE '1970-01-01',
       a.used
       + CASE WHEN here.region = '' THEN 0
              ELSE coalesce((SELECT d.used FROM usage_daily d
                              WHERE d.tenant_id = a.tenant_id AND d.day = a.day), 0) END
       + coalesce((SELECT sum(o.used) FROM usage_regional o
                    WHERE o.tenant_id = a.tenant_id AND o.day = a.day
                      AND o.region <> here.region), 0)
  FROM (SELECT * FROM home UNION ALL SELECT * FROM away) a, here;

-- name: gw_fleet_beat
-- idempotent: a beat sent twice is one beat
-- This replica's heartbeat ($1, its random id), and how many replicas beat within the TTL
-- ($2 ms), this one included: each takes that share of a tenant's burst
-- (gateway/limits/fleet.h). Rows of replicas gone for an hour are dropped on the way.
WITH gone AS (
    DELETE FROM gateway_replicas WHERE beat_at < now() - interval '1 hour'
), beat AS (
    INSERT INTO gateway_replicas (id) VALUES ($1)
        ON CONFLICT (id) DO UPDATE SET beat_at = now()
)
SELECT 1 + count(*)
  FROM gateway_replicas
 WHERE id <> $1 AND beat_at > now() - $2::integer * interval '1 millisecond';

-- name: gw_fleet_leave
-- idempotent: deleting twice deletes once
DELETE FROM gateway_replicas WHERE id = $1;
