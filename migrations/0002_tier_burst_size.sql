-- 0002: a tier's burst size apart from its sustained rate. Until now the burst bucket held
-- 2 × burst_rps requests; it now holds burst_size, refilled at burst_rps per second, and a
-- request over it is delayed, not refused, while the wait fits [limits] max_delay
-- (docs/LIMITS.md). Sized from what a stock monero-wallet-rpc sends at once: 13 calls for a
-- transfer, 6 for a sweep, 5 when it connects (tests/bench/wallet_calls.sh).

ALTER TABLE tiers ADD COLUMN burst_size integer;

-- Existing tiers keep at least the bucket they had (2 × burst_rps), and none holds less
-- than two wallet transfers (2 × 13 calls) with a few to spare.
UPDATE tiers SET burst_size = least(greatest(2::bigint * burst_rps, 30), 2147483647);

ALTER TABLE tiers
    ALTER COLUMN burst_size SET NOT NULL,
    ADD CONSTRAINT tiers_burst_size_check CHECK (burst_size > 0);

-- A tier inserted without a burst size gets the same derivation: a column default cannot
-- read another column, so a trigger fills it in before the NOT NULL check.
CREATE FUNCTION xmrgate_tier_default_burst_size() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.burst_size IS NULL THEN
        NEW.burst_size := least(greatest(2::bigint * NEW.burst_rps, 30), 2147483647);
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER tiers_default_burst_size BEFORE INSERT ON tiers
    FOR EACH ROW EXECUTE FUNCTION xmrgate_tier_default_burst_size();

-- The seeded tiers, where still as seeded (an operator's own numbers stay): the free
-- tier's bucket of 4 refused a wallet's transfer; 40 takes three transfers in a row, or a
-- wallet connecting, refreshing and sending, without a single delay.
UPDATE tiers SET burst_size = 40  WHERE id = 'free'      AND burst_rps = 2;
UPDATE tiers SET burst_size = 100 WHERE id = 'wallet'    AND burst_rps = 20;
UPDATE tiers SET burst_size = 300 WHERE id = 'merchant'  AND burst_rps = 100;
UPDATE tiers SET burst_size = 1000 WHERE id = 'sovereign' AND burst_rps = 500;
