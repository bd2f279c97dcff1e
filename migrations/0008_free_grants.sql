-- 0008: free tenants bounded per network and over all, and deleted once long lapsed
-- (docs/BILLING.md "Free tier"). An expand migration: a new table, nothing older builds read.
-- compatible-with: 7
--
-- free_grants: one row per free-tier tenant granted, with the client's network key
-- (billing/api/client_prefix.h: "4:203.0.113.0/24", "6:2001:db8::/48") and client key, so
-- that every billing instance counts the same grants (billing/api/free_grant.h). A grant
-- is counted in sliding windows (the last hour, the last 24 hours); rows older than the
-- longest window are deleted by the leader. Not a tenant's history: it outlives nothing.
CREATE TABLE free_grants (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    network    text NOT NULL CHECK (length(network) BETWEEN 1 AND 64),
    client     text NOT NULL CHECK (length(client) BETWEEN 1 AND 64),
    granted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX free_grants_network ON free_grants (network, granted_at);
CREATE INDEX free_grants_granted_at ON free_grants (granted_at);

-- free_grant_lock: the one row a free grant locks (FOR UPDATE) before it counts, so that
-- two grants on two instances are counted one after the other and the bounds hold.
CREATE TABLE free_grant_lock (
    id boolean PRIMARY KEY DEFAULT true CHECK (id)
);
INSERT INTO free_grant_lock DEFAULT VALUES;

-- The leader's sweep of lapsed free tenants walks them by valid_until.
CREATE INDEX tenants_valid_until ON tenants (valid_until);
