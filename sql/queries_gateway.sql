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
INSERT INTO usage_daily AS u (tenant_id, day, used)
SELECT r.tenant_id, DATE '1970-01-01' + r.day, r.amount
  FROM unnest($1::bigint[], $2::integer[], $3::bigint[]) AS r(tenant_id, day, amount)
  JOIN tenants t ON t.id = r.tenant_id
 ORDER BY r.tenant_id, r.day
    ON CONFLICT (tenant_id, day) DO UPDATE SET used = u.used + EXCLUDED.used
RETURNING u.tenant_id, u.day - DATE '1970-01-01', u.used;
