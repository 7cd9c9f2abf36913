import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Daily exchange rates against NOK (src/rates/, docs/exchange-rates.md): one row per currency and
 * banking day that has a published rate; weekends and holidays have none (a day uses the latest
 * earlier day's rate within the lookback, src/rates/rules.ts). `nok_per_unit` is NOK for ONE unit
 * of the currency (Norges Bank's per-100 quotes divided by 10^UNIT_MULT). NOK has no row (its rate is
 * 1). `source` says which source gave the rate: `norges_bank`, or `ecb` (the fallback, a cross rate
 * through the euro). A refresh upserts, so fetching a day again replaces its rate.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
    CREATE TABLE exchange_rates (
      currency char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$' AND currency <> 'NOK'),
      day date NOT NULL,
      nok_per_unit numeric NOT NULL CHECK (nok_per_unit > 0),
      source text NOT NULL CHECK (source IN ('norges_bank', 'ecb')),
      fetched_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (currency, day)
    );
  `))
