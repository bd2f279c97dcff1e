-- 0004: what a node of each class may be given. A third-party node (priority 'public')
-- sees the tenants' traffic, so it is kept at arm's length (docs/DEPLOYMENT.md): it serves
-- reads only while no own node (primary, standby) can, and it is given a transaction to
-- relay only when the operator says so here. NULL in either column means "by class".

-- Whether send_raw_transaction is sent to this node: NULL is true for own nodes and false
-- for public ones (a broadcast to a third party tells it which transaction came from this
-- gateway, at what time).
ALTER TABLE nodes ADD COLUMN broadcast boolean;

-- At most this many connections to the node at once: NULL is the gateway's
-- [nodes] max_connections for own nodes and 3 for public ones (monerod 0.18.4 and later
-- accepts 3 RPC connections per client IP on a public node, and resets the others).
ALTER TABLE nodes ADD COLUMN max_connections integer
    CHECK (max_connections IS NULL OR max_connections BETWEEN 1 AND 1024);
