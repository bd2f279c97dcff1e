-- NOTIFY triggers: every insert, update and delete of a tenant, node or tier is announced
-- on its channel with the row's id as the payload. Applied (CREATE OR REPLACE) by
-- `xmrgate-billing migrate` after the numbered migrations; delivered at commit.

CREATE OR REPLACE FUNCTION xmrgate_notify_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM pg_notify(TG_ARGV[0], OLD.id::text);
        RETURN OLD;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.id IS DISTINCT FROM NEW.id THEN
        PERFORM pg_notify(TG_ARGV[0], OLD.id::text);
    END IF;
    PERFORM pg_notify(TG_ARGV[0], NEW.id::text);
    RETURN NEW;
END
$$;

CREATE OR REPLACE FUNCTION xmrgate_touch_updated_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER tenants_notify AFTER INSERT OR UPDATE OR DELETE ON tenants
    FOR EACH ROW EXECUTE FUNCTION xmrgate_notify_row('xmrgate_tenants');
CREATE OR REPLACE TRIGGER nodes_notify AFTER INSERT OR UPDATE OR DELETE ON nodes
    FOR EACH ROW EXECUTE FUNCTION xmrgate_notify_row('xmrgate_nodes');
CREATE OR REPLACE TRIGGER tiers_notify AFTER INSERT OR UPDATE OR DELETE ON tiers
    FOR EACH ROW EXECUTE FUNCTION xmrgate_notify_row('xmrgate_tiers');

CREATE OR REPLACE TRIGGER tenants_touch BEFORE UPDATE ON tenants
    FOR EACH ROW EXECUTE FUNCTION xmrgate_touch_updated_at();
CREATE OR REPLACE TRIGGER invoices_touch BEFORE UPDATE ON invoices
    FOR EACH ROW EXECUTE FUNCTION xmrgate_touch_updated_at();
CREATE OR REPLACE TRIGGER nodes_touch BEFORE UPDATE ON nodes
    FOR EACH ROW EXECUTE FUNCTION xmrgate_touch_updated_at();
CREATE OR REPLACE TRIGGER payments_touch BEFORE UPDATE ON payments
    FOR EACH ROW EXECUTE FUNCTION xmrgate_touch_updated_at();

-- A region that follows the primary by logical replication (docs/DEPLOYMENT.md) gets its
-- tenants, nodes and tiers from the apply worker, which runs as a replica
-- (session_replication_role = replica) and fires only ALWAYS triggers: the NOTIFY
-- triggers fire there too, so that region's gateways LISTEN to their own database. (The
-- touch triggers stay ordinary: updated_at arrives with the replicated row.)
ALTER TABLE tenants ENABLE ALWAYS TRIGGER tenants_notify;
ALTER TABLE nodes ENABLE ALWAYS TRIGGER nodes_notify;
ALTER TABLE tiers ENABLE ALWAYS TRIGGER tiers_notify;
