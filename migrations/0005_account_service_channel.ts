import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The booking-system channel our own checkout sells through, so the mirror can tell our sales from others'. */
export default Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql.unsafe(`ALTER TABLE booking_system_accounts ADD COLUMN service_channel_id text`)
)
