-- Named queries of the gateway's admin API (gateway/admin_api.c). Every change to nodes or
-- tenants goes through PostgreSQL: its NOTIFY triggers carry it to every gateway replica.

-- name: adm_nodes_all
-- idempotent: a read
SELECT id, name, url, priority, pruned, enabled,
       to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
  FROM nodes
 ORDER BY CASE priority WHEN 'primary' THEN 0 WHEN 'standby' THEN 1 ELSE 2 END, id;

-- name: adm_node_insert
INSERT INTO nodes (name, url, priority, pruned, enabled)
VALUES ($1, $2, $3, $4::boolean, $5::boolean)
RETURNING id;

-- name: adm_node_update
-- NULL leaves a column as it is. Any UPDATE changes updated_at (the row's revision), which
-- resets the node's health state on every replica: that is also how a node dropped after
-- its failure ceiling is re-enabled.
UPDATE nodes
   SET url = coalesce($2, url),
       priority = coalesce($3, priority),
       pruned = coalesce($4::boolean, pruned),
       enabled = coalesce($5::boolean, enabled)
 WHERE name = $1
RETURNING id;

-- name: adm_node_delete
DELETE FROM nodes WHERE name = $1 RETURNING id;

-- name: adm_tenant_get
-- idempotent: a read
SELECT t.id, t.handle, t.tier_id, t.state,
       to_char(t.valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       coalesce((SELECT u.used FROM usage_daily u
                  WHERE u.tenant_id = t.id
                    AND u.day = (now() AT TIME ZONE 'UTC')::date), 0)
       + coalesce((SELECT sum(g.used) FROM usage_regional g
                    WHERE g.tenant_id = t.id
                      AND g.day = (now() AT TIME ZONE 'UTC')::date), 0),
       r.daily_quota, r.burst_rps, r.burst_size
  FROM tenants t JOIN tiers r ON r.id = t.tier_id
 WHERE t.id = $1::bigint;

-- name: adm_tenant_set_state
UPDATE tenants SET state = $2 WHERE id = $1::bigint RETURNING state;

-- Billing's metrics (billing/ops/bl_metrics.c), read at scrape time: cheap aggregates over
-- indexed columns.

-- name: bl_metrics_invoices
-- idempotent: a read
-- Invoices by state, and how long the oldest one has been in that state (stuck invoices).
SELECT state, count(*), coalesce(extract(epoch FROM now() - min(updated_at)), 0)::float8
  FROM invoices
 GROUP BY state;

-- name: bl_metrics_webhook_outbox
-- idempotent: a read
-- The webhook events not yet delivered nor given up, and the age of the oldest: the
-- predicate is webhook_events_due's (migration 0005), so the plan reads that partial index
-- (pending rows only, however many were delivered) and their heap rows for created_at.
SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
  FROM webhook_events
 WHERE delivered_at IS NULL AND failed_at IS NULL;

-- name: bl_metrics_payments
-- idempotent: a read
-- Payments by state with their piconero sum (an exact integer as text).
SELECT state, count(*), coalesce(sum(amount), 0)::text
  FROM payments
 GROUP BY state;
