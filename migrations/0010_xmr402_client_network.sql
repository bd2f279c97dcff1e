-- 0010: an XMR402 challenge remembers the network that asked for it, so that no network
-- holds more than its share of the open challenges ([xmr402] challenge_share,
-- billing/api/fair_share.h), counted in PostgreSQL for every billing instance at once.
-- An expand migration: a nullable column and an index; older builds neither read nor
-- write it (their challenges count for no network, only for the cap).
-- compatible-with: 9
ALTER TABLE invoices
    ADD COLUMN client_network text CHECK (length(client_network) BETWEEN 1 AND 64);

-- The open challenges of one network, counted before each new one.
CREATE INDEX invoices_xmr402_open_network ON invoices (client_network, expires_at)
    WHERE channel = 'xmr402' AND state = 'pending';
