-- 0003: XMR402's pending allowance and the cap on open challenges. A proven payment that is still short of its tier's
-- confirmations is served a bounded number of requests ([xmr402] pending_requests,
-- docs/BILLING.md) before the tenant is provisioned; the count is kept on the invoice so
-- every billing replica, and a restarted one, spends the same allowance once.

ALTER TABLE invoices
    ADD COLUMN xmr402_pending_used integer NOT NULL DEFAULT 0
        CHECK (xmr402_pending_used >= 0);

-- The open (unpaid, unexpired) XMR402 challenges, counted before each new one against
-- [xmr402] max_open_challenges.
CREATE INDEX invoices_xmr402_open ON invoices (expires_at)
    WHERE channel = 'xmr402' AND state = 'pending';
