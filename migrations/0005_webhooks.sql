-- 0005: webhooks for programs that buy through the API (docs/BILLING.md "Webhooks"). An
-- invoice created with a webhook_url gets one row in webhook_events per event (seen,
-- confirming at each new confirmation count, provisioned, expired), written in the same
-- transaction as the state change that causes it, so a crash loses none; delivery works
-- through the rows (at least once, exponential backoff, give up after [webhooks] retry_for).
-- The per-invoice signing secret is not stored: it is derived from [webhooks] secret_key and
-- the invoice id whenever billing signs (billing/hook_sign.h).

ALTER TABLE invoices
    ADD COLUMN webhook_url text CHECK (webhook_url IS NULL OR length(webhook_url) BETWEEN 8 AND 2048);

CREATE TABLE webhook_events (
    id              bigserial PRIMARY KEY,
    -- Stable over every attempt, the receivers' deduplication key: "<invoice>.<type>" and,
    -- for confirming, ".<count>". The unique key makes writing an event twice a no-op.
    event_id        text NOT NULL UNIQUE,
    invoice_id      uuid NOT NULL REFERENCES invoices (id),
    type            text NOT NULL CHECK (type IN ('seen', 'confirming', 'provisioned', 'expired')),
    confirmations   integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0),
    -- The exact bytes that are signed and sent, the same at every attempt.
    body            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- The next attempt; a sender that claims the row moves it a lease ahead, so another
    -- replica skips it and a sender killed mid-attempt leaves it due again.
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz,
    last_status     integer,
    last_error      text,
    delivered_at    timestamptz,
    failed_at       timestamptz,
    CHECK (delivered_at IS NULL OR failed_at IS NULL)
);

-- What the senders claim: the undelivered events, by due time.
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_at)
    WHERE delivered_at IS NULL AND failed_at IS NULL;
CREATE INDEX webhook_events_invoice ON webhook_events (invoice_id, id);
