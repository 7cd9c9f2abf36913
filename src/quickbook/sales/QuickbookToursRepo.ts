/**
 * The SQL of what a desk terminal can sell (QuickbookTours): the published tours linked to a
 * booking system on the sites the selling operator owns, its merchant at the payment provider, the
 * account a hold of a tour is released at, and the quotes stored in `quickbook_sales`. Typed with
 * SqlSchema and the row schemas below; a database error or a row that does not decode is a defect
 * at its edge (repoEdge: a span per method), once.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge } from "../../db/repoEdge.js"

const Category = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  isDefault: Schema.Boolean,
  minAge: Schema.NullOr(Schema.Number),
  maxAge: Schema.NullOr(Schema.Number)
})

export const DeskTourRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  operator_name: Schema.String,
  timezone: Schema.String,
  currency: Schema.String,
  duration_minutes: Schema.NullOr(Schema.Number),
  departure_times: Schema.mutable(Schema.Array(Schema.String)),
  /** The operator needs the guest's phone number for this tour (POST /book refuses without one). */
  requires_phone: Schema.Boolean,
  product_id: Schema.String,
  account_id: Schema.String,
  /** The booking-system account is a sandbox (migration 0018). */
  account_sandbox: Schema.Boolean,
  categories: Schema.mutable(Schema.Array(Category)),
  rate_ids: Schema.mutable(Schema.Array(Schema.String))
})
export type DeskTourRow = typeof DeskTourRow.Type

/** A quote as stored: the sale's row in `quickbook_sales` (status `quoted`). */
const NewQuote = Schema.Struct({
  reference: Schema.String,
  terminalId: Schema.String,
  keyId: Schema.String,
  operatorId: Schema.String,
  tourId: Schema.String,
  merchantId: Schema.String,
  productId: Schema.String,
  rateId: Schema.NullOr(Schema.String),
  startDate: Schema.String,
  startTime: Schema.String,
  startTimeId: Schema.String,
  /** JSON of the guest lines with their pricing categories. */
  guests: Schema.String,
  totalMinor: Schema.Number,
  vatMinor: Schema.Number,
  currency: Schema.String,
  /** JSON of the cart line. */
  cartLine: Schema.String,
  validUntil: Schema.DateFromSelf
})

export class QuickbookToursRepo extends Effect.Service<QuickbookToursRepo>()("Quickbook/ToursRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The tours the operator sells (one, with `tourId`), by title. */
    const sellableTours = SqlSchema.findAll({
      Request: Schema.Struct({ operatorId: Schema.String, tourId: Schema.NullOr(Schema.String) }),
      Result: DeskTourRow,
      execute: ({ operatorId, tourId }) =>
        sql`
          SELECT t.id, t.title, o.name AS operator_name, t.timezone, t.currency, t.duration_minutes, t.departure_times,
            t.requires_phone, t.booking_system_product_id AS product_id, o.booking_system_account_id AS account_id,
            a.sandbox AS account_sandbox,
            COALESCE((SELECT json_agg(json_build_object('id', pc.id, 'title', pc.title, 'isDefault', pc.is_default,
                'minAge', pc.min_age, 'maxAge', pc.max_age) ORDER BY pc.position, pc.id)
              FROM tour_pricing_categories pc WHERE pc.tour_id = t.id), '[]'::json) AS categories,
            COALESCE((SELECT array_agg(r.id ORDER BY r.position, r.id) FROM tour_rates r WHERE r.tour_id = t.id), '{}') AS rate_ids
          FROM tours t JOIN operators o ON o.id = t.operator_id
            JOIN booking_system_accounts a ON a.id = o.booking_system_account_id
          WHERE t.status = 'published' AND t.booking_system_product_id IS NOT NULL
            AND ${tourId === null ? sql`true` : sql`t.id = ${tourId}`}
            AND EXISTS (
              SELECT 1 FROM site_tours st JOIN sites s ON s.id = st.site_id
              WHERE st.tour_id = t.id AND s.owner_operator_id = ${operatorId}
                AND (t.operator_id = ${operatorId} OR st.sold_by = 'site_owner'))
          ORDER BY t.title, t.id`
    })

    /** The operator's merchant at the payment provider, if any. */
    const merchantOf = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ merchant_id: Schema.String, sandbox: Schema.Boolean }),
      execute: (operatorId) =>
        sql`SELECT merchant_id, sandbox FROM operator_payment_accounts WHERE operator_id = ${operatorId}`
    })

    /** The booking-system account of the tour's operator, if any. */
    const accountOfTour = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ account_id: Schema.String, sandbox: Schema.Boolean }),
      execute: (tourId) =>
        sql`
          SELECT a.id AS account_id, a.sandbox FROM tours t JOIN operators o ON o.id = t.operator_id
            JOIN booking_system_accounts a ON a.id = o.booking_system_account_id
          WHERE t.id = ${tourId}`
    })

    const insertQuote = SqlSchema.void({
      Request: NewQuote,
      execute: (q) =>
        sql`
          INSERT INTO quickbook_sales (reference, terminal_id, key_id, selling_operator_id, tour_id, merchant_id, product_id,
            rate_id, start_date, start_time, start_time_id, guests, total_minor, vat_minor, currency, cart_line, valid_until)
          VALUES (${q.reference}, ${q.terminalId}, ${q.keyId}, ${q.operatorId}, ${q.tourId}, ${q.merchantId},
            ${q.productId}, ${q.rateId}, ${q.startDate}, ${q.startTime}, ${q.startTimeId}, ${q.guests}::jsonb,
            ${q.totalMinor}, ${q.vatMinor}, ${q.currency}, ${q.cartLine}::jsonb, ${q.validUntil})`
    })

    return repoEdge("QuickbookToursRepo", { sellableTours, merchantOf, accountOfTour, insertQuote })
  })
}) {}
