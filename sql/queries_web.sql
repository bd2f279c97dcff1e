-- Named queries of the web pages' API (billing/api/api_tenant.c, billing/api/api_tenant_rotate.c).

-- name: bl_tenant_status
-- idempotent: a read
-- A tenant as its renew page shows it, by token hash: tier, validity and today's usage
-- (the gateway's day is the UTC date; its counters reach usage_daily within a second; the
-- other regions' rows, usage_regional, as of their replication lag).
SELECT t.handle, t.tier_id, tr.name, tr.burst_rps, tr.daily_quota, t.state,
       to_char(t.valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       t.valid_until > now(),
       coalesce(u.used, 0) + coalesce((SELECT sum(g.used) FROM usage_regional g
                                        WHERE g.tenant_id = t.id
                                          AND g.day = (now() AT TIME ZONE 'UTC')::date), 0),
       tr.price_minor = 0,
       to_char((now() AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD'), tr.burst_size
  FROM tenants t
  JOIN tiers tr ON tr.id = t.tier_id
  LEFT JOIN usage_daily u ON u.tenant_id = t.id AND u.day = (now() AT TIME ZONE 'UTC')::date
 WHERE t.token_hash = decode($1, 'hex');

-- name: bl_tenant_rotate
-- A new token and handle for the tenant holding the token hash $1, in one statement: the
-- NOTIFY trigger makes every gateway replica drop the old token and handle at commit. The
-- plan's time and usage are the row's and usage_daily's, keyed by id, so they carry over.
-- A concurrent rotation of the same token finds no row once the first one committed.
UPDATE tenants
   SET token_hash = decode($2, 'hex'), digest_ha1 = decode($3, 'hex'), handle = $4
 WHERE token_hash = decode($1, 'hex')
RETURNING id, handle, tier_id,
          to_char(valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          extract(epoch FROM valid_until)::bigint;
