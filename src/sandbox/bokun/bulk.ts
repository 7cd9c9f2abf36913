/** Volume for the mirror benchmark: ~100,000 one-line bookings in one set-based statement. */
import { Clock, Effect } from "effect"
import { badRequest } from "./failure.js"
import { FIRST_NAMES, LAST_NAMES } from "./names.js"
import type { Store } from "./store.js"
import { daysIn } from "./time.js"

export interface BulkSpec {
  readonly vendorId: number
  /** Booking lines to write (one booking each). */
  readonly lines: number
  readonly from: string
  readonly to: string
  readonly seed: number
}

/**
 * Writes `lines` bookings of one line each over [from, to] in one set-based statement, ignoring
 * capacity: volume for the mirror benchmark. Deterministic in the seed (hashes of the row number).
 */
export const bulkBookings = (store: Store, spec: BulkSpec) =>
  Effect.gen(function*() {
    const { sql } = store
    const vendor = yield* store.vendorById(spec.vendorId)
    const days = daysIn(spec.from, spec.to).length
    if (days === 0) return yield* badRequest("from is after to")
    const at = new Date(yield* Clock.currentTimeMillis)
    const seed = String(spec.seed)
    const [result] = yield* sql<{ n: number }>`
      WITH prods AS (
        SELECT p.id, row_number() OVER (ORDER BY p.id) - 1 AS idx,
          (SELECT array_agg(st.id ORDER BY st.time) FROM bokun_sandbox.start_times st WHERE st.product_id = p.id) AS starts,
          pr.rate_id, pr.pricing_category_id, pr.amount_minor, c.title AS category_title
        FROM bokun_sandbox.products p
        JOIN LATERAL (
          SELECT x.rate_id, x.pricing_category_id, x.amount_minor FROM bokun_sandbox.prices x
          JOIN bokun_sandbox.rates r ON r.id = x.rate_id
          JOIN bokun_sandbox.pricing_categories pc ON pc.id = x.pricing_category_id
          WHERE r.product_id = p.id ORDER BY r.position, r.id, pc.is_default DESC, pc.position LIMIT 1
        ) pr ON true
        JOIN bokun_sandbox.pricing_categories c ON c.id = pr.pricing_category_id
        WHERE p.vendor_id = ${vendor.id}
      ),
      chans AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS idx FROM bokun_sandbox.channels WHERE vendor_id = ${vendor.id}),
      counts AS (SELECT (SELECT count(*) FROM prods) AS products, (SELECT count(*) FROM chans) AS channels),
      gen AS (
        SELECT i,
          nextval('bokun_sandbox.booking_ids') AS booking_id,
          nextval('bokun_sandbox.booking_ids') AS line_id,
          abs(hashtext(${seed} || ':p:' || i)::bigint) AS hp,
          abs(hashtext(${seed} || ':d:' || i)::bigint) AS hd,
          abs(hashtext(${seed} || ':s:' || i)::bigint) AS hs,
          abs(hashtext(${seed} || ':q:' || i)::bigint) AS hq,
          abs(hashtext(${seed} || ':c:' || i)::bigint) AS hc,
          abs(hashtext(${seed} || ':n:' || i)::bigint) AS hn
        FROM generate_series(1, ${spec.lines}) i
      ),
      rows AS (
        SELECT g.*, p.id AS product_id, p.rate_id, p.pricing_category_id, p.category_title, p.amount_minor,
          p.starts[1 + (g.hs % array_length(p.starts, 1))] AS start_time_id,
          (${spec.from}::date + (g.hd % ${days})::int) AS date,
          1 + (g.hq % 4)::int AS party,
          CASE WHEN g.hc % 100 < 7 THEN 'CANCELLED' ELSE 'CONFIRMED' END AS status,
          ch.id AS channel_id,
          split_part(${FIRST_NAMES.join("|")}, '|', (1 + g.hn % ${FIRST_NAMES.length})::int) AS first_name,
          split_part(${LAST_NAMES.join("|")}, '|', (1 + (g.hn / 97) % ${LAST_NAMES.length})::int) AS last_name
        FROM gen g
        CROSS JOIN counts
        JOIN prods p ON p.idx = g.hp % counts.products
        JOIN chans ch ON ch.idx = (g.hc / 100) % counts.channels
      ),
      b AS (
        INSERT INTO bokun_sandbox.bookings (id, vendor_id, confirmation_code, status, channel_id, currency,
          first_name, last_name, email, paid_minor, created_at, updated_at)
        SELECT booking_id, ${vendor.id}, ${vendor.code_prefix} || '-' || booking_id, status, channel_id, ${vendor.currency},
          first_name, last_name, lower(first_name || '.' || last_name || '@example.com'), amount_minor * party,
          ${at}::timestamptz - ((hd % 60) || ' days')::interval, ${at}
        FROM rows
        RETURNING 1
      ),
      l AS (
      INSERT INTO bokun_sandbox.product_bookings (id, booking_id, vendor_id, product_id, rate_id, start_time_id, date,
        status, participants, pax, total_minor, updated_at)
      SELECT line_id, booking_id, ${vendor.id}, product_id, rate_id, start_time_id, date, status, party,
        jsonb_build_array(jsonb_build_object('pricingCategoryId', pricing_category_id, 'title', category_title, 'quantity', party)),
        amount_minor * party, ${at}
      FROM rows
      RETURNING 1
      )
      SELECT LEAST((SELECT count(*) FROM b), (SELECT count(*) FROM l))::int AS n`
    yield* store.changed
    return { lines: result?.n ?? 0 }
  }).pipe(Effect.withSpan("BokunSandbox.bulkBookings"))
