-- 0009: usage_daily and usage_regional are pruned by day (billing/payments/sweep.h,
-- [usage] retention): an index on the day, so that each poll cycle's bounded delete of the
-- oldest rows is an index probe, not a scan of a table that grows by a row per active
-- tenant a day. An expand migration: builds at 8 do not read these indexes.
-- compatible-with: 8
CREATE INDEX usage_daily_day ON usage_daily (day);
CREATE INDEX usage_regional_day ON usage_regional (day);
