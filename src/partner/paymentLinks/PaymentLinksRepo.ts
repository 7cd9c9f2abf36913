/**
 * The SQL of balance payment links (`payment_links`): the rows the write (PaymentLinks.ts,
 * OneLinkPerBalance.ts) makes, sends and retires, and the ones the payment-link watch
 * (LinkStatusChecks.ts) takes over, claims and closes. What a link is for is read in
 * LinkTargetsRepo.ts; what recording a paid link writes is in PaidLinksRepo.ts, the refunds of such
 * payments in LinkRefundsRepo.ts.
 *
 * Methods called inside `withTransaction` join that transaction (it is fiber-local).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { IdRow, repoEdge, transactionAtEdge } from "../../db/repoEdge.js"
import { PaymentLinkKind } from "./rules.js"

/** A `payment_links` row. */
export const LinkRow = Schema.Struct({
  id: Schema.String,
  target: Schema.String,
  booking_id: Schema.NullOr(Schema.String),
  manifest_row_id: Schema.NullOr(Schema.String),
  operator_id: Schema.String,
  kind: PaymentLinkKind,
  state: Schema.Literal("creating", "open", "closing", "closed"),
  amount_minor: Schema.Number,
  currency: Schema.String,
  merchant_id: Schema.String,
  idempotency_reference: Schema.String,
  provider_reference_id: Schema.String,
  description: Schema.String,
  provider_link_id: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Schema.DateFromSelf),
  checks: Schema.Number
})
export type LinkRow = typeof LinkRow.Type

export const LINK_COLUMNS = `id, target, booking_id, manifest_row_id, operator_id, kind, state, amount_minor, currency,
  merchant_id, idempotency_reference, provider_reference_id, description, provider_link_id, url, expires_at, checks`

/** A new link row, `creating`, written before the provider is called. */
export const NewLink = Schema.Struct({
  id: Schema.String,
  target: Schema.String,
  bookingId: Schema.NullOr(Schema.String),
  manifestRowId: Schema.NullOr(Schema.String),
  operatorId: Schema.String,
  kind: PaymentLinkKind,
  amountMinor: Schema.Number,
  currency: Schema.String,
  merchantId: Schema.String,
  idempotencyReference: Schema.String,
  providerReferenceId: Schema.String,
  description: Schema.String
})
export type NewLink = typeof NewLink.Type

/** What the provider answered when it made a link. */
const MadeLink = Schema.Struct({
  linkId: Schema.String,
  url: Schema.String,
  expiresAt: Schema.NullOr(Schema.DateFromSelf)
})
export type MadeLink = typeof MadeLink.Type

const LinkState = LinkRow.fields.state

const Batch = Schema.Struct({ seconds: Schema.Number, batch: Schema.Number })
/** A row as read, so that a statement changes it only while it is still in that state. */
const AsRead = Schema.Struct({ id: Schema.String, state: LinkState })

export class PaymentLinksRepo extends Effect.Service<PaymentLinksRepo>()("Partner/PaymentLinksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // The links of the write.

    const lockTarget = SqlSchema.void({
      Request: Schema.String,
      execute: (key) => sql`SELECT pg_advisory_xact_lock(hashtext(${`payment_link:${key}`}))`
    })

    const liveLinks = SqlSchema.findAll({
      Request: Schema.String,
      Result: LinkRow,
      execute: (target) =>
        sql`
          SELECT ${sql.literal(LINK_COLUMNS)} FROM payment_links
          WHERE target = ${target} AND state IN ('creating', 'open')
          ORDER BY created_at DESC`
    })

    const paidFor = SqlSchema.findOne({
      Request: Schema.Struct({ target: Schema.String, amountMinor: Schema.Number, currency: Schema.String }),
      Result: IdRow,
      execute: ({ amountMinor, currency, target }) =>
        sql`
          SELECT id FROM payment_links
          WHERE target = ${target} AND state = 'closed' AND closed_reason = 'paid'
            AND amount_minor = ${amountMinor} AND currency = ${currency}
          LIMIT 1`
    })

    const insertCreating = SqlSchema.single({
      Request: NewLink,
      Result: LinkRow,
      execute: (link) =>
        sql`
          INSERT INTO payment_links (id, target, booking_id, manifest_row_id, operator_id, kind, amount_minor, currency,
            merchant_id, idempotency_reference, provider_reference_id, description, state)
          VALUES (${link.id}, ${link.target}, ${link.bookingId}, ${link.manifestRowId}, ${link.operatorId}, ${link.kind},
            ${link.amountMinor}, ${link.currency}, ${link.merchantId}, ${link.idempotencyReference},
            ${link.providerReferenceId}, ${link.description}, 'creating')
          RETURNING ${sql.literal(LINK_COLUMNS)}`
    })

    const touch = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE payment_links SET updated_at = now() WHERE id = ${id}::uuid`
    })

    const setProviderLink = SqlSchema.void({
      Request: Schema.Struct({ link: AsRead, made: MadeLink }),
      execute: ({ link, made }) =>
        sql`
          UPDATE payment_links SET provider_link_id = ${made.linkId}, url = ${made.url}, expires_at = ${made.expiresAt},
            updated_at = now()
          WHERE id = ${link.id}::uuid AND state = ${link.state}`
    })

    const close = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, reason: Schema.String }),
      execute: ({ id, reason }) =>
        sql`UPDATE payment_links SET state = 'closed', closed_reason = ${reason}, updated_at = now() WHERE id = ${id}`
    })

    const lockForEmail = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, windowSeconds: Schema.Number }),
      Result: Schema.Struct({ state: LinkState, recent_email: Schema.NullOr(Schema.String) }),
      execute: ({ id, windowSeconds }) =>
        sql`
          SELECT state,
            CASE WHEN emailed_at > now() - make_interval(secs => ${windowSeconds}) THEN email_outbox_id END AS recent_email
          FROM payment_links WHERE id = ${id} FOR UPDATE`
    })

    const markClosing = SqlSchema.void({
      Request: Schema.String,
      execute: (id) =>
        sql`
          UPDATE payment_links SET state = 'closing', next_check_at = now(), updated_at = now()
          WHERE id = ${id}`
    })

    const markOpen = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, firstCheckSeconds: Schema.Number }),
      execute: ({ firstCheckSeconds, id }) =>
        sql`
          UPDATE payment_links SET state = 'open', updated_at = now(),
            next_check_at = now() + make_interval(secs => ${firstCheckSeconds})
          WHERE id = ${id} AND state = 'creating'`
    })

    const emailStatus = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ status: Schema.String }),
      execute: (emailId) => sql`SELECT status FROM email_outbox WHERE id = ${emailId}`
    })

    const setEmailed = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, emailId: Schema.String }),
      execute: ({ emailId, id }) =>
        sql`UPDATE payment_links SET email_outbox_id = ${emailId}, emailed_at = now() WHERE id = ${id}`
    })

    // The watch.

    const takeOverUnfinished = SqlSchema.findAll({
      Request: Batch,
      Result: IdRow,
      execute: ({ batch, seconds }) =>
        sql`
          UPDATE payment_links SET state = 'closing', next_check_at = now(), updated_at = now()
          WHERE id IN (
            SELECT id FROM payment_links
            WHERE state = 'creating' AND updated_at < now() - make_interval(secs => ${seconds})
            ORDER BY updated_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
          RETURNING id`
    })

    const claimDue = SqlSchema.findAll({
      Request: Batch,
      Result: LinkRow,
      execute: ({ batch, seconds }) =>
        sql`
          UPDATE payment_links SET next_check_at = now() + make_interval(secs => ${seconds})
          WHERE id IN (
            SELECT id FROM payment_links WHERE state IN ('open', 'closing') AND next_check_at <= now()
            ORDER BY next_check_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
          RETURNING ${sql.literal(LINK_COLUMNS)}`
    })

    const checkLater = SqlSchema.void({
      Request: Schema.Struct({ link: AsRead, error: Schema.NullOr(Schema.String), next: Schema.DateFromSelf }),
      execute: ({ error, link, next }) =>
        sql`
          UPDATE payment_links SET checks = checks + 1, last_checked_at = now(), last_error = ${error}, next_check_at = ${next}
          WHERE id = ${link.id}::uuid AND state = ${link.state}`
    })

    const closeChecked = SqlSchema.void({
      Request: Schema.Struct({ link: AsRead, reason: Schema.String, linkId: Schema.NullOr(Schema.String) }),
      execute: ({ link, linkId, reason }) =>
        sql`
          UPDATE payment_links SET state = 'closed', closed_reason = ${reason}, provider_link_id = coalesce(provider_link_id, ${linkId}),
            checks = checks + 1, last_checked_at = now(), last_error = NULL, updated_at = now()
          WHERE id = ${link.id}::uuid AND state = ${link.state}`
    })

    return {
      ...repoEdge("PaymentLinksRepo", {
        /** The per-booking lock of every instance's request, and of a cancel closing the booking's links. */
        lockTarget,
        /** The links a request may send or retire (a `closing` row is the job's), newest first. */
        liveLinks,
        /** Whether a link of the target for this very amount was paid. */
        paidFor: (target: string, amountMinor: number, currency: string) =>
          Effect.map(paidFor({ target, amountMinor, currency }), Option.isSome),
        insertCreating,
        /** Someone is finishing a `creating` row now: the watch's grace period starts again. */
        touch,
        /** What the provider made, on a row still in the state it was read in. */
        setProviderLink: (link: typeof AsRead.Type, made: MadeLink) => setProviderLink({ link, made }),
        /** The write closes a link here (closed at the provider, or found closed there). */
        close: (id: string, reason: string) => close({ id, reason }),
        /** Step 4's lock of the row: its state, and its email of the last `windowSeconds`. */
        lockForEmail: (id: string, windowSeconds: number) => lockForEmail({ id, windowSeconds }),
        /** Left to the closing of a cancel (or of the watch): due now. */
        markClosing,
        markOpen: (id: string, firstCheckSeconds: number) => markOpen({ id, firstCheckSeconds }),
        /** The status of an outbox email (read after the link's lock, a statement of its own). */
        emailStatus: (emailId: string) => Effect.map(emailStatus(emailId), Option.map((r) => r.status)),
        setEmailed: (id: string, emailId: string) => setEmailed({ id, emailId }),
        /** `creating` rows untouched for `graceSeconds` become `closing` (at most `batch`); their ids. */
        takeOverUnfinished: (graceSeconds: number, batch: number) =>
          takeOverUnfinished({ seconds: graceSeconds, batch }),
        /** Claims due `open` and `closing` rows (at most `batch`) by pushing their next check out. */
        claimDue: (claimSeconds: number, batch: number) => claimDue({ seconds: claimSeconds, batch }),
        /** Nothing learnt: a check counted, asked again at `next`. */
        checkLater: (link: LinkRow, error: string | null, next: Date) => checkLater({ link, error, next }),
        /** The watch closes a link, the check counted. */
        closeChecked: (link: LinkRow, reason: string, linkId: string | null) => closeChecked({ link, reason, linkId })
      }),
      /** `sql.withTransaction`, its own failures defects as the methods' are. */
      withTransaction: transactionAtEdge(sql)
    }
  })
}) {}
