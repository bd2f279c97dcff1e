-- 0006: more than one machine (docs/DEPLOYMENT.md "Outgrowing one machine").
--
-- gateway_replicas: every gateway replica announces itself here about once a second
-- (gateway/limits/fleet.h), so that each learns how many replicas share its database and
-- takes its share of a plan's burst: the burst a plan promises holds for the fleet, not
-- per replica. A replica that stops cleanly deletes its row; one that dies is no longer
-- counted once its beat is older than the fleet's TTL. Local to each database (a region
-- counts its own replicas): never published.
CREATE TABLE gateway_replicas (
    id         text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
    started_at timestamptz NOT NULL DEFAULT now(),
    beat_at    timestamptz NOT NULL DEFAULT now()
);

-- usage_regional: usage counted by the gateways of another region, whose database follows
-- the primary by logical replication (a subscriber of tiers, tenants, nodes and
-- usage_daily). A region's gateways add to their own rows only (the region is the
-- database's setting xmrgate.region, ALTER DATABASE … SET), which that region publishes
-- back; so no row is ever written in two places and replication has nothing to conflict
-- on. The daily quota is usage_daily plus every region's rows (sql/queries_gateway.sql).
CREATE TABLE usage_regional (
    region    text NOT NULL CHECK (region ~ '^[a-z0-9_-]{1,32}$'),
    tenant_id bigint NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    day       date NOT NULL,
    used      bigint NOT NULL DEFAULT 0 CHECK (used >= 0),
    PRIMARY KEY (tenant_id, day, region)
);
