/**
 * POST /book's SQL (src/quickbook/book/QuickbookBook.ts and the services it calls; the money
 * return's bookkeeping is QuickbookMoneyReturnRepo.ts): the payments presented
 * (`quickbook_payments`: recorded, leased, moved from state to state), the sales they pay
 * (`quickbook_sales`), and the merchants a payment is looked for on. Each statement is typed with
 * SqlSchema and the schemas of payment.ts; infrastructure errors are defects at this edge, once
 * (src/db/repoEdge.ts). A method called inside a caller's `sql.withTransaction` joins that transaction.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, flow, Option, Schema } from "effect"
import { moves, repoEdge } from "../../db/repoEdge.js"
import { QuickbookConfig } from "../config.js"
import {
  IntakeSale,
  MismatchFacts,
  PaymentKey,
  PaymentRow,
  Represented,
  SaleRow,
  StoredAnswer,
  StoredRequest,
  VerifiedFacts
} from "./payment.js"
import { BookFailureReason } from "./rules.js"

/** Other merchants of ours a payment not found on its sale's merchant is looked for on, at most. */
const OTHER_MERCHANTS_LOOKED_AT = 50

const Text = Schema.String
const NullText = Schema.NullOr(Schema.String)
const From = Schema.Literal("received", "mismatch")
const Method = Schema.Literal("void", "refund")
const KeyRow = Schema.Struct({ provider: Text, payment_id: Text })
const Claim = Schema.Struct({
  key: PaymentKey,
  from: From,
  reference: Text,
  verified: VerifiedFacts,
  represented: Schema.NullOr(Represented)
})

export class QuickbookBookRepo extends Effect.Service<QuickbookBookRepo>()("Quickbook/BookRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* QuickbookConfig

    const lease = sql`now() + make_interval(secs => ${config.bookLeaseSeconds})`
    const whereKey = (key: PaymentKey) => sql`provider = ${key.provider} AND payment_id = ${key.paymentId}`
    /** A mismatch no sale will use: the sale its order names settled, or it waited too long for it. */
    const strayDue =
      sql`(s.status IN ('confirmed', 'failed') OR p.updated_at < now() - make_interval(secs => ${config.mismatchReturnAfterSeconds}))`
    const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`
    /** The new sale, terminal, order and request of a mismatch presented again (nothing when it stays where it is). */
    const representedSet = (r: Represented | null) =>
      r === null ? sql`` : sql`, sale_reference = ${r.reference}, terminal_id = ${r.terminalId},
        payment_terminal_id = ${r.paymentTerminalId}, order_id = ${r.orderId}, request = ${json(r.request)}`

    // ---------------------------------------------------------------------------------------------
    // Sales

    const saleStatus = flow(
      SqlSchema.findOne({
        Request: Text,
        Result: Schema.Struct({ status: Text }),
        execute: (reference) => sql`SELECT status FROM quickbook_sales WHERE reference = ${reference}`
      }),
      Effect.map(Option.match({ onNone: () => null, onSome: (r) => r.status }))
    )

    const saleRow = SqlSchema.single({
      Request: Text,
      Result: SaleRow,
      execute: (reference) =>
        sql`SELECT reference, terminal_id, key_id, selling_operator_id, tour_id, merchant_id, product_id, rate_id,
          to_char(start_date, 'YYYY-MM-DD') AS start_date, start_time, start_time_id, guests, total_minor::int AS total_minor,
          trim(currency) AS currency, coalesce((cart_line->>'requiresPhone')::boolean, false) AS cart_requires_phone,
          valid_until, hold_id, hold_expires_at
        FROM quickbook_sales WHERE reference = ${reference}`
    })
    const sale = (reference: string) =>
      saleRow(reference).pipe(
        Effect.catchTag("NoSuchElementException", () => Effect.dieMessage(`sale ${reference} is gone`))
      )

    /** The sale POST /book names, if it is the terminal's. */
    const saleOfTerminal = SqlSchema.findOne({
      Request: Schema.Struct({ reference: Text, terminalId: Text }),
      Result: IntakeSale,
      execute: (r) =>
        sql`SELECT s.reference, (SELECT k.mode FROM quickbook_keys k WHERE k.id = s.key_id) AS key_mode,
          coalesce((s.cart_line->>'requiresPhone')::boolean, false) AS cart_requires_phone, t.requires_phone AS tour_requires_phone,
          (SELECT payment_terminal_id FROM quickbook_terminals WHERE id = ${r.terminalId}) AS payment_terminal_id
        FROM quickbook_sales s JOIN tours t ON t.id = s.tour_id
        WHERE s.reference = ${r.reference} AND s.terminal_id = ${r.terminalId}`
    })

    const tourRequiresPhone = flow(
      SqlSchema.findOne({
        Request: Text,
        Result: Schema.Struct({ requires_phone: Schema.Boolean }),
        execute: (tourId) => sql`SELECT requires_phone FROM tours WHERE id = ${tourId}`
      }),
      Effect.map(Option.exists((r) => r.requires_phone))
    )

    /** The booking-system account of the tour's operator (null: none linked). */
    const bookingAccountOfTour = flow(
      SqlSchema.findOne({
        Request: Text,
        Result: Schema.Struct({ account_id: NullText }),
        execute: (tourId) =>
          sql`SELECT o.booking_system_account_id AS account_id FROM tours t JOIN operators o ON o.id = t.operator_id WHERE t.id = ${tourId}`
      }),
      Effect.map(Option.match({ onNone: () => null, onSome: (r) => r.account_id }))
    )

    const holdReleased = SqlSchema.void({
      Request: Text,
      execute: (reference) =>
        sql`UPDATE quickbook_sales SET hold_id = NULL, hold_expires_at = NULL, hold_released_at = now() WHERE reference = ${reference}`
    })

    // ---------------------------------------------------------------------------------------------
    // Payments: recorded, read, leased

    const paymentRow = SqlSchema.findOne({
      Request: PaymentKey,
      Result: PaymentRow,
      execute: (key) =>
        sql`SELECT p.provider, p.payment_id, p.order_id, p.sale_reference, p.terminal_id, p.payment_terminal_id, p.request,
          p.amount_minor::int AS amount_minor, trim(p.currency) AS currency, p.merchant_id, p.paid_at, p.state, p.role,
          p.hold_id, p.failure_reason, p.answer, p.refund_method, p.refund_seq, p.refund_reference, p.refund_order_id,
          p.refund_state, p.refunded_minor::int AS refunded_minor, p.refund_attempts, p.order_reference_id, s.selling_operator_id,
          coalesce(p.lease_until < now(), false) AS lease_expired
        FROM quickbook_payments p JOIN quickbook_sales s ON s.reference = p.sale_reference
        WHERE p.provider = ${key.provider} AND p.payment_id = ${key.paymentId}`
    })
    const mustLoad = (key: PaymentKey) =>
      Effect.flatMap(
        paymentRow(key),
        Option.match({
          onNone: () => Effect.dieMessage(`payment ${key.provider}/${key.paymentId} is gone`),
          onSome: Effect.succeed
        })
      )

    /** Records a payment presented for a sale, with its lease; false when it was recorded before. */
    const insert = moves(
      Schema.Struct({ key: PaymentKey, orderId: Text, terminalId: Text, request: StoredRequest }),
      ({ key, ...r }) =>
        sql`INSERT INTO quickbook_payments (provider, payment_id, order_id, sale_reference, terminal_id, payment_terminal_id, request, lease_until)
        VALUES (${key.provider}, ${key.paymentId}, ${r.orderId}, ${r.request.reference}, ${r.terminalId},
          (SELECT payment_terminal_id FROM quickbook_terminals WHERE id = ${r.terminalId}), ${
          json(r.request)
        }, ${lease})
        ON CONFLICT (provider, payment_id) DO NOTHING RETURNING provider`
    )

    /** A payment that could not be verified (nothing happened): removed, so a later call verifies again. */
    const removeReceived = SqlSchema.void({
      Request: PaymentKey,
      execute: (key) => sql`DELETE FROM quickbook_payments WHERE ${whereKey(key)} AND state = 'received'`
    })

    /** Takes over a row whose lease ran out (a crash); false when someone else holds it. */
    const takeLease = moves(
      PaymentKey,
      (key) =>
        sql`UPDATE quickbook_payments SET lease_until = ${lease}, updated_at = now()
      WHERE ${
          whereKey(key)
        } AND state IN ('received', 'verified', 'booking', 'refunding') AND lease_until < now() RETURNING provider`
    )

    /** Payments not final whose lease ran out, oldest first. */
    const leasesRunOut = SqlSchema.findAll({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () =>
        sql`SELECT provider, payment_id FROM quickbook_payments
        WHERE state IN ('received', 'verified', 'booking', 'refunding') AND lease_until < now() ORDER BY lease_until LIMIT 100`
    })

    // ---------------------------------------------------------------------------------------------
    // received | mismatch → mismatch, or → verified (the sale claimed); verified → booking → confirmed

    /** Records the payment as not matching (from `from`), with what its order took; true when this call did. */
    const markMismatch = moves(
      Schema.Struct({ key: PaymentKey, from: From, facts: MismatchFacts, represented: Schema.NullOr(Represented) }),
      ({ facts: f, from, key, represented }) =>
        sql`UPDATE quickbook_payments SET state = 'mismatch', detail = ${f.detail.slice(0, 1000)},
          answer = ${json({ status: "mismatch" } satisfies StoredAnswer)}, alerted_at = now(),
          amount_minor = ${f.amountMinor}, currency = ${f.currency}, merchant_id = ${f.merchantId}, paid_at = ${f.paidAt},
          order_reference_id = ${f.referenceId}, lease_until = NULL, updated_at = now() ${representedSet(represented)}
        WHERE ${whereKey(key)} AND state = ${from} RETURNING provider`
    )

    const toVerified = moves(
      Claim,
      ({ from, key, represented, verified: v }) =>
        sql`UPDATE quickbook_payments SET state = 'verified', role = 'sale', amount_minor = ${v.amountMinor},
        currency = ${v.currency}, merchant_id = ${v.merchantId}, paid_at = ${v.paidAt}, order_reference_id = NULL,
        detail = NULL, answer = NULL, lease_until = ${lease}, updated_at = now() ${representedSet(represented)}
      WHERE ${whereKey(key)} AND state = ${from} RETURNING provider`
    )
    const claimSale = SqlSchema.single({
      Request: Claim,
      Result: Schema.Struct({ paid_by_payment_id: Text }),
      execute: ({ key, reference }) =>
        sql`UPDATE quickbook_sales SET paid_by_payment_id = coalesce(paid_by_payment_id, ${key.paymentId}),
          status = CASE WHEN paid_by_payment_id IS NULL THEN 'booking' ELSE status END, updated_at = now()
        WHERE reference = ${reference} RETURNING paid_by_payment_id`
    })
    const markDuplicate = SqlSchema.void({
      Request: PaymentKey,
      execute: (key) => sql`UPDATE quickbook_payments SET role = 'duplicate' WHERE ${whereKey(key)}`
    })

    /**
     * A verified payment claims its sale (`paid_by_payment_id` set only when empty), or is a
     * duplicate of the payment that did, in one transaction with its own move to `verified`. False
     * when the payment had moved on meanwhile.
     */
    const claim = (c: typeof Claim.Type) =>
      sql.withTransaction(Effect.gen(function*() {
        if (!(yield* toVerified(c))) return false
        const claimed = yield* claimSale(c)
        if (claimed.paid_by_payment_id !== c.key.paymentId) yield* markDuplicate(c.key)
        return true
      }))

    /** The re-checks passed: the way to book is fixed (the hold, or seats when null). */
    const startBooking = SqlSchema.void({
      Request: Schema.Struct({ key: PaymentKey, holdId: NullText }),
      execute: ({ holdId, key }) =>
        sql`UPDATE quickbook_payments SET state = 'booking', hold_id = ${holdId}, lease_until = ${lease}, updated_at = now()
        WHERE ${whereKey(key)} AND state = 'verified'`
    })

    /** booking → confirmed; false when the payment had moved on meanwhile. */
    const confirmPayment = moves(
      PaymentKey,
      (key) =>
        sql`UPDATE quickbook_payments SET state = 'confirmed', lease_until = NULL, updated_at = now()
      WHERE ${whereKey(key)} AND state = 'booking' RETURNING provider`
    )

    /** The sale its payment pays confirmed, with the guest, language and the booking system's booking. */
    const confirmSale = SqlSchema.void({
      Request: Schema.Struct({
        reference: Text,
        paymentId: Text,
        request: StoredRequest,
        bookingId: Text,
        bookingCode: Text
      }),
      execute: (s) =>
        sql`UPDATE quickbook_sales SET status = 'confirmed', customer = ${
          json(s.request.customer)
        }, language = ${s.request.language},
          booking_id = ${s.bookingId}, booking_code = ${s.bookingCode}, confirmed_at = now(), updated_at = now()
        WHERE reference = ${s.reference} AND paid_by_payment_id = ${s.paymentId}`
    })

    /** The answer a repeat of the payment gets. */
    const storeAnswer = SqlSchema.void({
      Request: Schema.Struct({ key: PaymentKey, answer: StoredAnswer }),
      execute: ({ answer, key }) => sql`UPDATE quickbook_payments SET answer = ${json(answer)} WHERE ${whereKey(key)}`
    })

    // ---------------------------------------------------------------------------------------------
    // → refunding: a failure, or a mismatch no sale will use (the recovery job)

    /** The failure, its answer and the first money return's method and reference, together; false when moved on. */
    const startReturn = moves(
      Schema.Struct({
        key: PaymentKey,
        reason: BookFailureReason,
        answer: StoredAnswer,
        method: Method,
        reference: Text
      }),
      ({ key, ...r }) =>
        sql`UPDATE quickbook_payments SET state = 'refunding', failure_reason = ${r.reason}, answer = ${json(r.answer)},
          refund_method = ${r.method}, refund_seq = 1, refund_reference = ${r.reference},
          refund_state = 'requested', lease_until = ${lease}, updated_at = now()
        WHERE ${whereKey(key)} AND state IN ('verified', 'booking') RETURNING provider`
    )

    /** The sale its payment pays failed, with the guest and language it was asked for. */
    const failSale = SqlSchema.void({
      Request: Schema.Struct({ reference: Text, paymentId: Text, reason: BookFailureReason, request: StoredRequest }),
      execute: (s) =>
        sql`UPDATE quickbook_sales SET status = 'failed', failed_at = now(), failure_reason = ${s.reason},
          customer = ${json(s.request.customer)}, language = ${s.request.language}, updated_at = now()
        WHERE reference = ${s.reference} AND paid_by_payment_id = ${s.paymentId}`
    })

    /** Mismatches due to be returned, oldest first. */
    const straysDue = SqlSchema.findAll({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () =>
        sql`SELECT p.provider, p.payment_id FROM quickbook_payments p JOIN quickbook_sales s ON s.reference = p.order_reference_id
        WHERE p.state = 'mismatch' AND p.amount_minor IS NOT NULL AND p.currency IS NOT NULL AND p.paid_at IS NOT NULL AND ${strayDue}
        ORDER BY p.updated_at LIMIT 100`
    })

    /**
     * mismatch → refunding (role `stray`) with the first return's method and reference, if it is
     * still due (checked in the same statement); the status of the sale its order names.
     */
    const startStrayReturn = flow(
      SqlSchema.findOne({
        Request: Schema.Struct({ key: PaymentKey, answer: StoredAnswer, method: Method, reference: Text }),
        Result: Schema.Struct({ status: Text }),
        execute: ({ key, ...r }) =>
          sql`UPDATE quickbook_payments p SET state = 'refunding', role = 'stray', failure_reason = 'payment_mismatch',
            answer = ${json(r.answer)}, refund_method = ${r.method}, refund_seq = 1, refund_reference = ${r.reference},
            refund_state = 'requested', lease_until = ${lease}, updated_at = now()
          FROM quickbook_sales s
          WHERE p.provider = ${key.provider} AND p.payment_id = ${key.paymentId} AND p.state = 'mismatch'
            AND s.reference = p.order_reference_id AND ${strayDue}
          RETURNING s.status`
      }),
      Effect.map(Option.map((r) => r.status))
    )

    // ---------------------------------------------------------------------------------------------
    // Merchants (QuickbookMerchants)

    /** The operator a merchant belongs to, the given operator first when it is theirs. */
    const merchantOwner = flow(
      SqlSchema.findOne({
        Request: Schema.Struct({ merchantId: Text, operatorId: Text }),
        Result: Schema.Struct({ operator_id: Text }),
        execute: (r) =>
          sql`SELECT operator_id FROM operator_payment_accounts WHERE merchant_id = ${r.merchantId}
          ORDER BY (operator_id = ${r.operatorId}) DESC, operator_id LIMIT 1`
      }),
      Effect.map(Option.map((r) => r.operator_id))
    )

    /** Our merchants other than `exclude` of the operator's kind (sandbox or live), each with an operator that has it. */
    const otherMerchants = SqlSchema.findAll({
      Request: Schema.Struct({ operatorId: Text, exclude: Schema.Array(Text) }),
      Result: Schema.Struct({ operator_id: Text, merchant_id: Text }),
      execute: (r) =>
        sql`SELECT DISTINCT ON (a.merchant_id) a.operator_id, a.merchant_id FROM operator_payment_accounts a
        WHERE a.merchant_id NOT IN ${sql.in(r.exclude)}
          AND a.sandbox = (SELECT o.sandbox FROM operator_payment_accounts o WHERE o.operator_id = ${r.operatorId})
        ORDER BY a.merchant_id, (a.operator_id = ${r.operatorId}) DESC, a.operator_id
        LIMIT ${OTHER_MERCHANTS_LOOKED_AT}`
    })

    return repoEdge("QuickbookBookRepo", {
      saleStatus,
      sale,
      saleOfTerminal,
      tourRequiresPhone,
      bookingAccountOfTour,
      holdReleased,
      load: paymentRow,
      mustLoad,
      insert,
      removeReceived,
      takeLease,
      leasesRunOut,
      markMismatch,
      claim,
      startBooking,
      confirmPayment,
      confirmSale,
      storeAnswer,
      startReturn,
      failSale,
      straysDue,
      startStrayReturn,
      merchantOwner,
      otherMerchants
    })
  })
}) {}
