-- 0001: the first schema. Money is bigint piconero; states are checked text values;
-- constraints make impossible states impossible rather than relying on the daemons.

CREATE TABLE tiers (
    id            text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9_-]{0,31}$'),
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
    burst_rps     integer NOT NULL CHECK (burst_rps > 0),
    daily_quota   bigint NOT NULL CHECK (daily_quota > 0),
    -- The monthly price: in minor units of a fiat currency (cents), or in piconero when
    -- price_currency is 'XMR'. Zero only for a free tier.
    price_currency text NOT NULL CHECK (price_currency ~ '^[A-Z]{3}$'),
    price_minor   bigint NOT NULL CHECK (price_minor >= 0),
    confirmations integer NOT NULL CHECK (confirmations BETWEEN 0 AND 720),
    max_months    integer NOT NULL DEFAULT 12 CHECK (max_months BETWEEN 1 AND 120),
    public        boolean NOT NULL DEFAULT true,
    sort_order    integer NOT NULL DEFAULT 0,
    CHECK ((price_minor = 0) = (confirmations = 0))
);

INSERT INTO tiers (id, name, burst_rps, daily_quota, price_currency, price_minor,
                   confirmations, max_months, sort_order) VALUES
    ('free',     'Free',     2,     2000,    'XMR', 0,    0,  1,  0),
    ('wallet',   'Wallet',   20,    100000,  'USD', 500,  10, 12, 1),
    ('merchant', 'Merchant', 100,   2000000, 'USD', 2500, 10, 12, 2),
    ('sovereign','Sovereign',500,   20000000,'USD', 9900, 10, 12, 3);

CREATE TABLE tenants (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Public handle: the username for Digest and Basic (--daemon-login handle:token).
    handle           text NOT NULL UNIQUE CHECK (handle ~ '^t_[a-z2-7]{12}$'),
    -- SHA-256 of the token: what Bearer, Basic and the path token are checked against.
    token_hash       bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    -- Digest needs HA1 (a password equivalent) at rest: stored wrapped with AES-256-GCM
    -- under a key only the daemons hold (gateway/token.h explains why).
    digest_ha1       bytea NOT NULL CHECK (length(digest_ha1) = 45),
    tier_id          text NOT NULL REFERENCES tiers (id),
    state            text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'suspended')),
    valid_until      timestamptz NOT NULL,
    -- The persistent subaddress that renewals are paid to (NULL for free tenants).
    subaddress_index integer UNIQUE CHECK (subaddress_index > 0),
    subaddress       text UNIQUE,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CHECK ((subaddress_index IS NULL) = (subaddress IS NULL))
);

CREATE TABLE invoices (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind                   text NOT NULL CHECK (kind IN ('purchase', 'renewal')),
    channel                text NOT NULL CHECK (channel IN ('web', 'api', 'xmr402')),
    tier_id                text NOT NULL REFERENCES tiers (id),
    months                 integer NOT NULL CHECK (months BETWEEN 1 AND 120),
    -- renewal: the tenant to extend; purchase: set when provisioned.
    tenant_id              bigint REFERENCES tenants (id),
    -- purchase: the credentials that become valid when the invoice is provisioned.
    token_hash             bytea UNIQUE CHECK (length(token_hash) = 32),
    digest_ha1             bytea CHECK (length(digest_ha1) = 45),
    handle                 text CHECK (handle ~ '^t_[a-z2-7]{12}$'),
    state                  text NOT NULL DEFAULT 'pending' CHECK (state IN (
                               'pending', 'seen', 'confirming', 'paid', 'provisioned',
                               'underpaid', 'expired', 'late', 'reverted')),
    amount                 bigint NOT NULL CHECK (amount >= 0),
    paid                   bigint NOT NULL DEFAULT 0 CHECK (paid >= 0),
    subaddress_index       integer CHECK (subaddress_index > 0),
    subaddress             text,
    confirmations_required integer NOT NULL CHECK (confirmations_required >= 0),
    -- What the state machine last derived from the payments (billing/invoice_state.h).
    confirmations          integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0),
    -- The locked quote: the tier's price and, for fiat, the rate used (fiat per XMR).
    price_currency         text NOT NULL CHECK (price_currency ~ '^[A-Z]{3}$'),
    price_minor            bigint NOT NULL CHECK (price_minor >= 0),
    rate_fiat_per_xmr      numeric(24, 8) CHECK (rate_fiat_per_xmr > 0),
    expires_at             timestamptz NOT NULL,
    idempotency_key        text UNIQUE CHECK (length(idempotency_key) BETWEEN 1 AND 255),
    request_fingerprint    bytea CHECK (length(request_fingerprint) = 32),
    challenge_nonce        text UNIQUE,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now(),
    provisioned_at         timestamptz,
    -- Only a free invoice has no amount and no subaddress, and it is provisioned at once.
    CHECK ((amount = 0) = (subaddress_index IS NULL)),
    CHECK (amount > 0 OR state = 'provisioned'),
    CHECK ((subaddress_index IS NULL) = (subaddress IS NULL)),
    CHECK (kind = 'renewal' OR (token_hash IS NOT NULL AND digest_ha1 IS NOT NULL
                                AND handle IS NOT NULL)),
    CHECK (kind = 'purchase' OR tenant_id IS NOT NULL),
    CHECK ((state = 'provisioned') = (provisioned_at IS NOT NULL)),
    CHECK ((idempotency_key IS NULL) = (request_fingerprint IS NULL))
);

-- One open invoice per subaddress at a time: a payment can always be attributed.
CREATE UNIQUE INDEX invoices_open_subaddress ON invoices (subaddress_index)
    WHERE state IN ('pending', 'seen', 'confirming', 'paid', 'underpaid', 'reverted');
-- A purchase always gets a fresh subaddress: a wallet that hands out an index twice
-- (its file restored from an old copy) is caught here, not by a misattributed payment.
CREATE UNIQUE INDEX invoices_purchase_subaddress ON invoices (subaddress_index)
    WHERE kind = 'purchase';
CREATE INDEX invoices_state ON invoices (state, expires_at);
-- Attribution of a new payment: the invoices on its subaddress.
CREATE INDEX invoices_subaddress ON invoices (subaddress_index);
CREATE INDEX invoices_tenant ON invoices (tenant_id);

CREATE TABLE payments (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    txid             text NOT NULL CHECK (txid ~ '^[0-9a-f]{64}$'),
    subaddress_index integer NOT NULL CHECK (subaddress_index > 0),
    -- The invoice it was attributed to; NULL when none was open (kept for the operator).
    invoice_id       uuid REFERENCES invoices (id),
    amount           bigint NOT NULL CHECK (amount > 0),
    height           bigint CHECK (height > 0),
    confirmations    integer NOT NULL DEFAULT 0 CHECK (confirmations >= 0),
    state            text NOT NULL CHECK (state IN ('pool', 'confirmed', 'gone', 'double_spend')),
    -- The transfer's unlock_time (0, a height or a time): time-locked money is not counted.
    unlock_time      bigint NOT NULL DEFAULT 0 CHECK (unlock_time >= 0),
    source           text NOT NULL CHECK (source IN ('poller', 'xmr402')),
    first_seen_at    timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (txid, subaddress_index),
    CHECK ((state = 'confirmed') = (height IS NOT NULL))
);
CREATE INDEX payments_invoice ON payments (invoice_id);
-- The poller's window: live payments in the pool or above the cursor (not history).
CREATE INDEX payments_live ON payments (height)
    WHERE state IN ('pool', 'confirmed', 'double_spend');

CREATE TABLE usage_daily (
    tenant_id bigint NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    day       date NOT NULL,
    used      bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
    PRIMARY KEY (tenant_id, day)
);

CREATE TABLE nodes (
    id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9_.-]{1,64}$'),
    url        text NOT NULL UNIQUE CHECK (url ~ '^https?://[^/?#]+$'),
    priority   text NOT NULL DEFAULT 'primary'
                   CHECK (priority IN ('primary', 'standby', 'public')),
    pruned     boolean NOT NULL DEFAULT false,
    enabled    boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Billing's poll cursor: the wallet height below which every transfer is stored.
CREATE TABLE billing_cursor (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    height    bigint NOT NULL DEFAULT 0 CHECK (height >= 0),
    -- The wallet's height at the last completed poll, and when (for operators).
    wallet_height bigint NOT NULL DEFAULT 0 CHECK (wallet_height >= 0),
    polled_at     timestamptz
);
INSERT INTO billing_cursor DEFAULT VALUES;
