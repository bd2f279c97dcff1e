-- Named queries of xmrgate-billing (prepared once per connection by name).
-- Money is bigint piconero, passed and returned as decimal text.
-- "-- idempotent" marks a query that may be sent again on a new connection when the old one
-- broke before its answer (common/xg_pg.h); every other one is sent once.

-- name: bl_tenant_grant
-- Operator grant: a tenant of tier $4 valid for $5 days from now, no invoice.
INSERT INTO tenants (handle, token_hash, digest_ha1, tier_id, valid_until)
SELECT $1, decode($2, 'hex'), decode($3, 'hex'), t.id, now() + make_interval(days => $5::int)
  FROM tiers t
 WHERE t.id = $4
RETURNING id, to_char(valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"');

-- name: bl_tiers_public
-- idempotent: a read
SELECT id, name, burst_rps, daily_quota, price_currency, price_minor, confirmations, max_months,
       burst_size
  FROM tiers
 WHERE public
 ORDER BY sort_order, id;

-- name: bl_tier_get
-- idempotent: a read
SELECT id, price_currency, price_minor, confirmations, max_months, public
  FROM tiers
 WHERE id = $1;

-- name: bl_tiers_max_confirmations
-- idempotent: a read
SELECT coalesce(max(confirmations), 0) FROM tiers;

-- name: bl_tenant_by_token_hash
-- The tenant a renewal is for and its persistent subaddress, locked until the renewal's
-- invoice is written; what a tier change would carry comes from bl_tenant_renewal_facts.
SELECT t.id, t.subaddress_index, t.subaddress
  FROM tenants t
 WHERE t.token_hash = decode($1, 'hex')
   FOR UPDATE OF t;

-- name: bl_tenant_set_subaddress
-- A granted tenant gets its persistent subaddress at its first renewal.
UPDATE tenants SET subaddress_index = $2::int, subaddress = $3
 WHERE id = $1::bigint AND subaddress_index IS NULL;

-- name: bl_invoice_by_idempotency_key
-- idempotent: a read
-- The last column is false once the purchase's tenant rotated its token: the token derived
-- again would be the old one, which no longer works (billing/api/api_tenant_rotate.c).
SELECT i.id::text, encode(i.request_fingerprint, 'hex'), i.token_hash IS NOT NULL,
       encode(i.token_hash, 'hex'), coalesce(t.token_hash = i.token_hash, true)
  FROM invoices i
  LEFT JOIN tenants t ON t.id = i.tenant_id
 WHERE i.idempotency_key = $1;

-- name: bl_invoice_open_on_subaddress
-- The invoice still waiting for money on a subaddress, and whether anything arrived.
SELECT i.id::text, i.state, EXISTS (SELECT 1 FROM payments p WHERE p.invoice_id = i.id)
  FROM invoices i
 WHERE i.subaddress_index = $1::int
   AND i.state IN ('pending', 'seen', 'confirming', 'paid', 'underpaid', 'reverted')
   FOR UPDATE;

-- name: bl_invoice_supersede
-- A renewal replaces an untouched pending one on the same subaddress; what its expired
-- webhook event says (billing/hooks/hook_outbox.h) comes back.
UPDATE invoices SET state = 'expired', expires_at = least(expires_at, now())
 WHERE id = $1::uuid AND state = 'pending'
RETURNING webhook_url IS NOT NULL, amount, paid, confirmations, confirmations_required,
          extract(epoch FROM now())::bigint;

-- name: bl_invoice_insert
INSERT INTO invoices (kind, channel, tier_id, months, tenant_id, token_hash, digest_ha1, handle,
                      amount, subaddress_index, subaddress, confirmations_required,
                      price_currency, price_minor, rate_fiat_per_xmr, expires_at,
                      idempotency_key, request_fingerprint, state, provisioned_at, webhook_url)
VALUES ($1, $2, $3, $4::int, $5::bigint, decode($6, 'hex'), decode($7, 'hex'), $8,
        $9::bigint, $10::int, $11, $12::int, $13, $14::bigint, $15::numeric,
        now() + make_interval(secs => $16::int), $17, decode($18, 'hex'), $19,
        CASE WHEN $19 = 'provisioned' THEN now() END, $20)
RETURNING id::text, extract(epoch FROM now())::bigint;

-- name: bl_invoice_get
-- idempotent: a read
-- An invoice as every reader decodes it: the API's view, XMR402's proofs, settling (which
-- locks the row first, bl_invoice_lock). The columns are named, in this order, as
-- billing/invoice/invoice_row.h lists them; the database's clock is the one clock every
-- instance shares.
SELECT i.id::text AS id, i.kind AS kind, i.state AS state, i.tier_id AS tier,
       i.months AS months, i.amount AS amount, i.paid AS paid,
       i.confirmations AS confirmations, i.confirmations_required AS confirmations_required,
       i.subaddress_index AS subaddress_index, i.subaddress AS subaddress,
       i.challenge_nonce AS challenge_nonce, encode(i.token_hash, 'hex') AS token_hash,
       i.tenant_id AS tenant_id, coalesce(t.handle, i.handle) AS handle,
       to_char(t.valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS valid_until,
       i.price_currency AS price_currency, i.price_minor AS price_minor,
       i.rate_fiat_per_xmr::text AS rate,
       extract(epoch FROM i.expires_at)::bigint AS expires,
       to_char(i.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS expires_at,
       (extract(epoch FROM i.created_at) * 1000)::bigint AS created_ms,
       to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS created_at,
       extract(epoch FROM i.provisioned_at)::bigint AS provisioned_at,
       i.webhook_url AS webhook_url, extract(epoch FROM now())::bigint AS now
  FROM invoices i
  LEFT JOIN tenants t ON t.id = i.tenant_id
 WHERE i.id = $1::uuid;

-- name: bl_invoice_lock
-- The invoice's row locked for the settling transaction, which reads it next
-- (bl_invoice_get): two instances settling one invoice take turns.
SELECT 1
  FROM invoices
 WHERE id = $1::uuid
   FOR UPDATE;

-- name: bl_invoice_payment_sums
-- idempotent: a read
-- The invoice's payments summed per class the state machine tells apart
-- (billing/invoice/invoice.h): state, confirmations, unlock_time, and whether first seen by
-- expires_at, within the late grace period after it ($2 seconds) or later, compared in
-- whole seconds as bl_invoice_lock gives them. However many payments there are (dust sent
-- to a renewal subaddress included), all are counted, in one row per class; a row's
-- first_seen is its class's latest, on the same side of both limits.
SELECT sum(p.amount)::bigint, p.confirmations, p.state, p.unlock_time,
       max(extract(epoch FROM p.first_seen_at)::bigint)
  FROM payments p
  JOIN invoices i ON i.id = p.invoice_id
 WHERE p.invoice_id = $1::uuid
 GROUP BY p.state, p.confirmations, p.unlock_time,
          extract(epoch FROM p.first_seen_at)::bigint <= extract(epoch FROM i.expires_at)::bigint,
          extract(epoch FROM p.first_seen_at)::bigint
              <= extract(epoch FROM i.expires_at)::bigint + $2::bigint;

-- name: bl_invoice_set_state
UPDATE invoices SET state = $2, paid = $3::bigint, confirmations = $4::int
 WHERE id = $1::uuid
   AND (state, paid, confirmations) IS DISTINCT FROM ($2, $3::bigint, $4::int);

-- name: bl_invoice_set_provisioned
UPDATE invoices
   SET state = 'provisioned', provisioned_at = now(), tenant_id = $2::bigint,
       paid = $3::bigint, confirmations = $4::int
 WHERE id = $1::uuid AND state <> 'provisioned';

-- name: bl_tenant_from_invoice
-- A purchase: the tenant with the invoice's credentials and its subaddress for life.
INSERT INTO tenants (handle, token_hash, digest_ha1, tier_id, valid_until, subaddress_index,
                     subaddress)
SELECT handle, token_hash, digest_ha1, tier_id, now() + make_interval(months => months),
       subaddress_index, subaddress
  FROM invoices
 WHERE id = $1::uuid
RETURNING id;

-- name: bl_tenant_renewal_facts
-- What a renewal carries over (billing/core/pricing.h price_carry): the tenant's tier, its
-- monthly price now, and the time left in microseconds (0 once lapsed); the row locked
-- until the renewal commits. Read when a renewal is quoted and when it is settled
-- (billing/payments/settle.h, settle_renewal_facts_load).
SELECT t.tier_id, tr.price_currency, tr.price_minor,
       greatest((extract(epoch FROM t.valid_until) - extract(epoch FROM now())) * 1000000,
                0)::bigint
  FROM tenants t
  JOIN tiers tr ON tr.id = t.tier_id
 WHERE t.id = $1::bigint
   FOR UPDATE OF t;

-- name: bl_tenant_extend
-- A renewal or tier change: valid_until = now + the carried time ($4 microseconds: the
-- time left, at a tier change converted by price) + months, at the new tier. Unchanged
-- tier: greatest(valid_until, now) + months, to the microsecond.
UPDATE tenants
   SET valid_until = now() + $4::bigint * interval '1 microsecond'
                     + make_interval(months => $3::int),
       tier_id = $2
 WHERE id = $1::bigint
RETURNING id;

-- name: bl_invoice_payments_list
-- idempotent: a read
SELECT txid, amount, confirmations, state, unlock_time,
       extract(epoch FROM first_seen_at)::bigint,
       to_char(first_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
  FROM payments
 WHERE invoice_id = $1::uuid
 ORDER BY first_seen_at, id;

-- name: bl_payments_live
-- idempotent: a read
-- The poller's window: what should still be in the wallet's answer.
SELECT txid, subaddress_index, amount, coalesce(height, 0), confirmations, state, unlock_time
  FROM payments
 WHERE state IN ('pool', 'confirmed', 'double_spend')
   AND (height IS NULL OR height > $1::bigint);

-- name: bl_payment_upsert
-- Stored once per (txid, subaddress index). A new payment goes to the invoice waiting on
-- that subaddress, else to the newest one there (a late payment), else to none (kept for
-- the operator). Returns the invoice when the row is new or changed, nothing otherwise.
INSERT INTO payments (txid, subaddress_index, invoice_id, amount, height, confirmations, state,
                      source, unlock_time)
VALUES ($1, $2::int,
        (SELECT id FROM invoices
          WHERE subaddress_index = $2::int
          ORDER BY state IN ('pending', 'seen', 'confirming', 'paid', 'underpaid', 'reverted')
                   DESC, created_at DESC
          LIMIT 1),
        $3::bigint, $4::bigint, $5::int, $6, 'poller', $7::bigint)
ON CONFLICT (txid, subaddress_index) DO UPDATE
   SET amount = EXCLUDED.amount, height = EXCLUDED.height,
       confirmations = EXCLUDED.confirmations, state = EXCLUDED.state,
       unlock_time = EXCLUDED.unlock_time
 WHERE (payments.amount, payments.height, payments.confirmations, payments.state,
        payments.unlock_time)
       IS DISTINCT FROM (EXCLUDED.amount, EXCLUDED.height, EXCLUDED.confirmations,
                         EXCLUDED.state, EXCLUDED.unlock_time)
RETURNING coalesce(invoice_id::text, '');

-- name: bl_payment_gone
-- It left the pool or the chain (a reorg, an evicted or double-spent transaction).
UPDATE payments SET state = 'gone', height = NULL, confirmations = 0
 WHERE txid = $1 AND subaddress_index = $2::int
   AND state IN ('pool', 'confirmed', 'double_spend')
RETURNING coalesce(invoice_id::text, '');

-- name: bl_invoices_due
-- idempotent: a read
-- Invoices whose deadline passed with nothing to wake them: pending or reverted ones
-- expire; underpaid ones expire once the late grace period is over too.
SELECT id::text
  FROM invoices
 WHERE (state IN ('pending', 'reverted') AND expires_at < now())
    OR (state = 'underpaid' AND expires_at < now() - make_interval(secs => $1::int));

-- name: bl_subaddress_max
-- idempotent: a read. The highest subaddress index the database has handed out (0: none),
-- which the view-only wallet must know (billing/subaddrs.c).
SELECT greatest((SELECT max(subaddress_index) FROM invoices),
                (SELECT max(subaddress_index) FROM tenants),
                (SELECT max(subaddress_index) FROM payments), 0);

-- name: bl_cursor_get
-- idempotent: a read
SELECT height, wallet_height FROM billing_cursor;

-- name: bl_cursor_set
-- idempotent: absolute values; the height only moves up
UPDATE billing_cursor
   SET height = greatest(height, $1::bigint), wallet_height = $2::bigint, polled_at = now();

-- name: bl_invoice_set_tenant
UPDATE invoices SET tenant_id = $2::bigint WHERE id = $1::uuid;

-- ---- XMR402 (billing/api/api_xmr402*.c) -------------------------------------------------

-- name: bl_xmr402_invoice_insert
-- An agent's purchase: like bl_invoice_insert, with the challenge nonce its proof must sign.
INSERT INTO invoices (kind, channel, tier_id, months, token_hash, digest_ha1, handle, amount,
                      subaddress_index, subaddress, confirmations_required, price_currency,
                      price_minor, rate_fiat_per_xmr, expires_at, challenge_nonce,
                      client_network)
VALUES ('purchase', 'xmr402', $1, 1, decode($2, 'hex'), decode($3, 'hex'), $4, $5::bigint,
        $6::int, $7, $8::int, $9, $10::bigint, $11::numeric,
        now() + make_interval(secs => $12::int), $13, $14)
RETURNING id::text;

-- name: bl_xmr402_invoice_on_subaddress
-- idempotent: a read
-- The XMR402 invoice a transfer to this subaddress paid (purchases never share one).
SELECT id::text
  FROM invoices
 WHERE subaddress_index = $1::int AND channel = 'xmr402'
 ORDER BY created_at DESC
 LIMIT 1;

-- name: bl_xmr402_payment_of_txid
-- idempotent: a read
-- What billing already recorded of a txid: the invoice it paid and its state. A proof whose
-- transaction left the node (double-spent, dropped) is still answered from this.
SELECT invoice_id::text, state
  FROM payments
 WHERE txid = $1 AND invoice_id IS NOT NULL
 ORDER BY updated_at DESC
 LIMIT 1;

-- name: bl_xmr402_payment_double_spend
-- idempotent: it sets a state, the same again
-- The node saw the transaction double-spent: its pool payments say so, and keep saying so
-- while it stays in the pool (invoice_pay_state_after: monerod forgets its mark when the
-- transaction is added again on a relay upgrade).
UPDATE payments SET state = 'double_spend'
 WHERE txid = $1 AND state = 'pool';

-- name: bl_xmr402_txid_elsewhere
-- idempotent: a read
-- A txid satisfies one invoice only: the other invoice it is already recorded for, if any.
SELECT invoice_id::text
  FROM payments
 WHERE txid = $1 AND invoice_id IS NOT NULL AND invoice_id <> $2::uuid
 LIMIT 1;

-- name: bl_xmr402_payment_upsert
-- The proven payment, in the poller's table under the poller's key: whichever of the two
-- sees it first inserts it, the other only updates the same row.
INSERT INTO payments (txid, subaddress_index, invoice_id, amount, height, confirmations, state,
                      source, unlock_time)
VALUES ($1, $2::int, $3::uuid, $4::bigint, $5::bigint, $6::int, $7, 'xmr402', $8::bigint)
ON CONFLICT (txid, subaddress_index) DO UPDATE
   SET amount = EXCLUDED.amount, height = EXCLUDED.height,
       confirmations = EXCLUDED.confirmations, state = EXCLUDED.state,
       unlock_time = EXCLUDED.unlock_time,
       invoice_id = coalesce(payments.invoice_id, EXCLUDED.invoice_id)
 WHERE (payments.amount, payments.height, payments.confirmations, payments.state,
        payments.unlock_time, payments.invoice_id)
       IS DISTINCT FROM (EXCLUDED.amount, EXCLUDED.height, EXCLUDED.confirmations,
                         EXCLUDED.state, EXCLUDED.unlock_time,
                         coalesce(payments.invoice_id, EXCLUDED.invoice_id))
RETURNING invoice_id::text;

-- name: bl_xmr402_pending_take
-- One request of the pending allowance ($2 per invoice): only while the payment is proven
-- and still confirming, before the quote expires, and with no transaction of the invoice
-- double-spent or gone. Answers what is left and the tier's limits; no row: none left.
UPDATE invoices i
   SET xmr402_pending_used = i.xmr402_pending_used + 1
  FROM tiers tr
 WHERE i.id = $1::uuid AND tr.id = i.tier_id
   AND i.channel = 'xmr402' AND i.state IN ('seen', 'confirming', 'paid')
   AND i.expires_at > now() AND i.xmr402_pending_used < $2::int
   AND NOT EXISTS (SELECT 1 FROM payments p
                    WHERE p.invoice_id = i.id AND p.state IN ('double_spend', 'gone'))
RETURNING $2::int - i.xmr402_pending_used, tr.burst_rps, tr.burst_size, tr.daily_quota,
          extract(epoch FROM i.expires_at)::bigint;

-- name: bl_xmr402_open_challenges
-- XMR402 challenges nobody has paid yet and that still hold their quote, over all clients
-- ([xmr402] max_open_challenges) and of the network $1 ([xmr402] challenge_share);
-- invoices_xmr402_open (0003) and invoices_xmr402_open_network (0010) keep them index scans.
SELECT (SELECT count(*)
          FROM invoices
         WHERE channel = 'xmr402' AND state = 'pending' AND expires_at > now()),
       (SELECT count(*)
          FROM invoices
         WHERE channel = 'xmr402' AND state = 'pending' AND expires_at > now()
           AND client_network = $1);

-- name: bl_xmr402_tenant
-- idempotent: a read
-- The tenant an XMR402 invoice provisioned, as the gateway needs it to serve at once.
SELECT t.id, t.handle, t.tier_id, tr.burst_rps, tr.daily_quota,
       to_char(t.valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       extract(epoch FROM t.valid_until)::bigint, encode(t.token_hash, 'hex'), t.state,
       tr.burst_size
  FROM tenants t
  JOIN tiers tr ON tr.id = t.tier_id
 WHERE t.id = $1::bigint;

-- ---- webhooks (billing/hooks/hook_outbox.c, hook_sender.c) ------------------------------

-- name: bl_hook_event_insert
-- An event in the outbox, in the transaction of the state change that causes it; the same
-- event written again (a settle rerun) is a no-op.
INSERT INTO webhook_events (event_id, invoice_id, type, confirmations, body)
VALUES ($1, $2::uuid, $3, $4::int, $5)
ON CONFLICT (event_id) DO NOTHING;

-- name: bl_hook_claim
-- Up to $1 due events for this sender: each is leased $2 ms ahead (longer than an
-- attempt), so another replica skips it and one killed mid-attempt leaves it due again.
UPDATE webhook_events e
   SET next_attempt_at = now() + make_interval(secs => $2::double precision / 1000)
  FROM invoices i
 WHERE e.id IN (SELECT w.id FROM webhook_events w
                 WHERE w.delivered_at IS NULL AND w.failed_at IS NULL
                   AND w.next_attempt_at <= now()
                 ORDER BY w.next_attempt_at, w.id
                 LIMIT $1::int
                   FOR UPDATE SKIP LOCKED)
   AND i.id = e.invoice_id
RETURNING e.id, e.event_id, e.invoice_id::text, coalesce(i.webhook_url, ''), e.body,
          e.attempts, (extract(epoch FROM now() - e.created_at) * 1000)::bigint,
          extract(epoch FROM now())::bigint;

-- name: bl_hook_release
-- idempotent: moving the next attempt again only moves it a moment later
-- Events a sender claimed and does not send now (their destination busy or its breaker
-- open, billing/hooks/hook_dest.h): ids $1 due again $2 ms from now each, no attempt counted.
UPDATE webhook_events w
   SET next_attempt_at = now() + make_interval(secs => u.delay_ms::double precision / 1000)
  FROM unnest($1::bigint[], $2::bigint[]) AS u(id, delay_ms)
 WHERE w.id = u.id AND w.delivered_at IS NULL AND w.failed_at IS NULL;

-- name: bl_hook_result
-- One attempt's outcome: delivered ($4), or the next attempt in $5 ms, or given up ($6).
UPDATE webhook_events
   SET attempts = attempts + 1, last_attempt_at = now(), last_status = $2::int,
       last_error = $3,
       delivered_at = CASE WHEN $4::boolean THEN now() END,
       failed_at = CASE WHEN NOT $4::boolean AND $6::boolean THEN now() END,
       next_attempt_at = CASE WHEN $4::boolean OR $6::boolean THEN next_attempt_at
                              ELSE now() + make_interval(secs => $5::double precision / 1000)
                         END
 WHERE id = $1::bigint AND delivered_at IS NULL AND failed_at IS NULL;

-- name: bl_hook_events_list
-- idempotent: a read
-- An invoice's webhook deliveries as GET /api/invoices/<id> shows them.
SELECT event_id, type, confirmations, attempts, coalesce(last_status, 0), last_error,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(last_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(delivered_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       to_char(failed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
  FROM webhook_events
 WHERE invoice_id = $1::uuid
 ORDER BY id
 LIMIT 200;
-- name: bl_xmr402_challenges_sweep
-- idempotent: deleting rows already past their retention twice deletes nothing more
-- Expired XMR402 challenges nobody paid, $1 seconds after their expiry (billing/payments/sweep.h),
-- at most $2 a call; rows another transaction holds are left for the next cycle.
WITH stale AS (
    SELECT i.id
      FROM invoices i
     WHERE i.channel = 'xmr402' AND i.state = 'expired' AND i.paid = 0
       AND i.tenant_id IS NULL
       AND i.expires_at < now() - make_interval(secs => $1::bigint)
       AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.invoice_id = i.id)
       AND NOT EXISTS (SELECT 1 FROM webhook_events w WHERE w.invoice_id = i.id)
     ORDER BY i.expires_at
     LIMIT $2::int
       FOR UPDATE SKIP LOCKED
)
DELETE FROM invoices i
 USING stale
 WHERE i.id = stale.id;

-- name: bl_free_grant_lock
-- The lock every free grant takes first (migrations/0007): the count that follows, a new
-- statement, sees every grant committed before it.
SELECT id FROM free_grant_lock FOR UPDATE;

-- name: bl_free_grant_take
-- A free grant for network $1, client $2, unless one of the bounds is reached: network $3
-- an hour, network $4 in 24 hours, $5 an hour over all (billing/api/free_grant.h). Returns,
-- for each bound, NULL when one more fits, else the seconds until its oldest counted grant
-- leaves the window; the row is inserted only when all three are NULL. Run under
-- bl_free_grant_lock in the tenant's transaction, so a rolled-back tenant counts nothing.
WITH w AS (
    SELECT (SELECT ceil(extract(epoch FROM g.granted_at + interval '1 hour' - now()))::bigint
              FROM free_grants g
             WHERE g.network = $1 AND g.granted_at > now() - interval '1 hour'
             ORDER BY g.granted_at DESC OFFSET $3::int - 1 LIMIT 1) AS network_hour,
           (SELECT ceil(extract(epoch FROM g.granted_at + interval '1 day' - now()))::bigint
              FROM free_grants g
             WHERE g.network = $1 AND g.granted_at > now() - interval '1 day'
             ORDER BY g.granted_at DESC OFFSET $4::int - 1 LIMIT 1) AS network_day,
           (SELECT ceil(extract(epoch FROM g.granted_at + interval '1 hour' - now()))::bigint
              FROM free_grants g
             WHERE g.granted_at > now() - interval '1 hour'
             ORDER BY g.granted_at DESC OFFSET $5::int - 1 LIMIT 1) AS global_hour
), ins AS (
    INSERT INTO free_grants (network, client)
    SELECT $1, $2 FROM w
     WHERE network_hour IS NULL AND network_day IS NULL AND global_hour IS NULL
)
SELECT network_hour, network_day, global_hour FROM w;

-- name: bl_free_grants_prune
-- idempotent: grants older than the longest window (a day) count for nothing
DELETE FROM free_grants
 WHERE id IN (SELECT id FROM free_grants WHERE granted_at < now() - interval '1 day'
              ORDER BY granted_at LIMIT $1::int);

-- name: bl_free_tenants_sweep
-- idempotent: a tenant already deleted is not found again
-- Free tenants lapsed $1 seconds ago (billing/payments/sweep.h), at most $2 a call: the
-- tier is free, the tenant never had a subaddress (a renewal towards a paid tier gives
-- one) and no invoice of it asked for money. Its invoices and their webhook events go with
-- it; the delete's NOTIFY (sql/functions_notify.sql) makes every gateway drop it.
WITH lapsed AS (
    SELECT t.id
      FROM tenants t
      JOIN tiers r ON r.id = t.tier_id
     WHERE r.price_minor = 0 AND t.subaddress_index IS NULL
       AND t.valid_until < now() - make_interval(secs => $1::bigint)
       AND NOT EXISTS (SELECT 1 FROM invoices i
                        WHERE i.tenant_id = t.id AND (i.amount > 0 OR i.kind = 'renewal'))
     ORDER BY t.valid_until
     LIMIT $2::int
       FOR UPDATE OF t SKIP LOCKED
), hooks AS (
    DELETE FROM webhook_events w
     USING invoices i, lapsed
     WHERE w.invoice_id = i.id AND i.tenant_id = lapsed.id
), invs AS (
    DELETE FROM invoices i
     USING lapsed
     WHERE i.tenant_id = lapsed.id
)
DELETE FROM tenants t
 USING lapsed
 WHERE t.id = lapsed.id;

-- name: bl_usage_prune
-- idempotent: rows past the retention are deleted once; a second call finds fewer
-- Usage counts older than $1 days (billing/payments/sweep.h), the oldest $2 of each table a
-- call: usage_daily (a region that follows the primary receives the deletes) and the other
-- regions' usage_regional rows the primary holds. Today's day is UTC's, as the gateways
-- count it. Returns how many rows went from each.
WITH old AS (
    SELECT tenant_id, day FROM usage_daily
     WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int
     ORDER BY day LIMIT $2::int
), daily AS (
    DELETE FROM usage_daily u USING old
     WHERE u.tenant_id = old.tenant_id AND u.day = old.day
    RETURNING 1
), old_regional AS (
    SELECT region, tenant_id, day FROM usage_regional
     WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int
     ORDER BY day LIMIT $2::int
), regional AS (
    DELETE FROM usage_regional u USING old_regional o
     WHERE u.region = o.region AND u.tenant_id = o.tenant_id AND u.day = o.day
    RETURNING 1
)
SELECT (SELECT count(*) FROM daily), (SELECT count(*) FROM regional);

-- name: bl_ha1_rewrap_tenants
-- idempotent: a read
-- rewrap-ha1 (billing/ops/rewrap.h): the next batch of tenants after id $1, in id order.
SELECT id, handle, encode(digest_ha1, 'hex')
  FROM tenants
 WHERE id > $1::bigint
 ORDER BY id
 LIMIT $2::int;

-- name: bl_ha1_rewrap_tenant
-- rewrap-ha1: the HA1 re-wrapped, only if the row still holds what was read ($2), so a
-- token rotated meanwhile (a new HA1 under the current key) is never overwritten. The
-- tenants_notify trigger tells the gateways.
UPDATE tenants
   SET digest_ha1 = decode($3, 'hex')
 WHERE id = $1::bigint AND digest_ha1 = decode($2, 'hex');

-- name: bl_ha1_rewrap_invoices
-- idempotent: a read
-- rewrap-ha1: the next batch of purchases not yet provisioned after id $1, whose
-- credentials become a tenant's when they are paid (bl_tenant_from_invoice copies them).
SELECT id, handle, encode(digest_ha1, 'hex')
  FROM invoices
 WHERE id > $1::uuid AND kind = 'purchase' AND state <> 'provisioned'
 ORDER BY id
 LIMIT $2::int;

-- name: bl_ha1_rewrap_invoice
-- rewrap-ha1: as bl_ha1_rewrap_tenant, for a purchase not yet provisioned.
UPDATE invoices
   SET digest_ha1 = decode($3, 'hex')
 WHERE id = $1::uuid AND digest_ha1 = decode($2, 'hex') AND state <> 'provisioned';
