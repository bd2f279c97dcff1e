-- Named queries of xmrgate-gateway (prepared once per connection by name).

-- name: gw_tenants_all
SELECT t.id, encode(t.token_hash, 'hex'), encode(t.digest_ha1, 'hex'), t.handle, t.tier_id,
       r.burst_rps, r.daily_quota, extract(epoch FROM t.valid_until)::bigint,
       t.state = 'suspended'
  FROM tenants t JOIN tiers r ON r.id = t.tier_id;

-- name: gw_tenant_by_id
SELECT t.id, encode(t.token_hash, 'hex'), encode(t.digest_ha1, 'hex'), t.handle, t.tier_id,
       r.burst_rps, r.daily_quota, extract(epoch FROM t.valid_until)::bigint,
       t.state = 'suspended'
  FROM tenants t JOIN tiers r ON r.id = t.tier_id
 WHERE t.id = $1::bigint;

-- name: gw_tenants_by_tier
SELECT t.id, encode(t.token_hash, 'hex'), encode(t.digest_ha1, 'hex'), t.handle, t.tier_id,
       r.burst_rps, r.daily_quota, extract(epoch FROM t.valid_until)::bigint,
       t.state = 'suspended'
  FROM tenants t JOIN tiers r ON r.id = t.tier_id
 WHERE t.tier_id = $1;

-- name: gw_nodes_enabled
SELECT id, name, url, priority, pruned
  FROM nodes
 WHERE enabled
 ORDER BY CASE priority WHEN 'primary' THEN 0 WHEN 'standby' THEN 1 ELSE 2 END, id;
