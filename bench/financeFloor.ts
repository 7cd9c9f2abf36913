/**
 * The floor's finance lists (`npm run bench:finance`, issue 15), loaded by bench/floor.ts: after the
 * floor's key lookup and rate limit (scope `finance:read`), the statements of the five reads copied
 * verbatim with the same parameters in the same order (sent at once where the service sends them at
 * once), and the answer built with the service's own pure mappers:
 *
 * - GET /api/v1/finance/payouts: PayoutsRepo.list, then .adjustments and .partners at once;
 *   toPayout (src/partner/finance/payouts/rules.ts).
 * - GET /api/v1/finance/chargebacks: ChargebacksRepo.list; toChargeback.
 * - GET /api/v1/finance/pay-later: PayLaterReadRepo.page and .totals at once; toCharge.
 * - GET /api/v1/finance/statements: StatementsRepo.sections and .numbers at once, then .entries;
 *   the statement rules (monthPeriod, lastMonth, tooMany, statements).
 * - GET /api/v1/finance/invoices: FinanceInvoicesRepo.merchantsOf, .list, linesOf, .operatorNames;
 *   toDocument (src/invoices/InvoicesRepo.ts), toApi, and the file links signed as
 *   InvoiceFileLinks signs them (base: the floor's own address).
 * Cursors are the service's (src/http/cursor.ts; the same filters bound), so a cursor from one server
 * works on the other. Only what the benchmark asks is checked (the limit, partner_id, the state and
 * type, the days and months); a malformed value is a 400.
 */
import { Either } from "effect"
import type pg from "pg"
import { type CursorPosition, decodeCursor, encodeCursor, filterFingerprint } from "../src/http/cursor.js"
import { deriveLinkSecret, signLink } from "../src/http/linkSignature.js"
import { INVOICE_FILES_PATH, INVOICE_LINK_SECONDS } from "../src/invoices/InvoiceFileLinks.js"
import { toDocument } from "../src/invoices/InvoicesRepo.js"
import { type ChargebackRow, toChargeback } from "../src/partner/finance/chargebacks/rules.js"
import { INVOICE_LIMIT_DEFAULT, toApi } from "../src/partner/finance/invoices/rules.js"
import type { PayLaterChargeRow } from "../src/partner/finance/payLater/PayLaterReadRepo.js"
import { PAY_LATER_DEFAULT_LIMIT, PAY_LATER_STATES, toCharge } from "../src/partner/finance/payLater/rules.js"
import {
  type AdjustmentRow,
  type MerchantPartnerRow,
  type PayoutRow,
  toPayout
} from "../src/partner/finance/payouts/rules.js"
import * as statementRules from "../src/partner/finance/statements/rules.js"

export interface FinanceKey {
  readonly partners: ReadonlyArray<{ readonly id: string; readonly name: string }>
}

export interface FinanceFloorDeps {
  readonly pool: pg.Pool
  readonly cursorSecret: () => Uint8Array
  /** Throws the floor's refusal (problem details with this status). */
  readonly refuse: (status: number, detail: string) => never
  /** The floor's own address (http://127.0.0.1:<port>), the base of the invoice file links. */
  readonly base: () => string
}

const toPgArray = (ids: ReadonlyArray<string>) => `{${ids.join(",")}}`

/** src/http/cursor.ts microsToIso */
const microsToIso = (micros: string) => {
  const value = BigInt(micros)
  const iso = new Date(Number(value / 1000n)).toISOString()
  return iso.replace("Z", String(value % 1000n).padStart(3, "0") + "Z")
}

type DocumentRow = Parameters<typeof toDocument>[0]
type LineRow = Parameters<typeof toDocument>[1][number]

const LISTED = "b.status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')"

// ---- payouts (src/partner/finance/payouts/PayoutsRepo.ts) -------------------------------------------

const PAYOUT_COLUMNS = `
        SELECT p.id, p.merchant_id, p.payout_id, to_char(p.settlement_date, 'YYYY-MM-DD') AS settlement_date,
          to_char(p.transactions_from, 'YYYY-MM-DD') AS transactions_from,
          to_char(p.transactions_to, 'YYYY-MM-DD') AS transactions_to, p.report_type, p.currency,
          p.sales_minor::text, p.refunds_minor::text, p.fees_minor::text, p.fee_vat_minor::text, p.payout_minor::text,
          (extract(epoch FROM p.sort_at) * 1000000)::bigint::text AS sort_micros
        FROM settlement_payouts p`

const ADJUSTMENTS = `
        SELECT payout_row_id, type, description, to_char(date, 'YYYY-MM-DD') AS date, debit_minor::text,
          credit_minor::text, net_minor::text
        FROM settlement_adjustments
        WHERE payout_row_id = ANY($1::uuid[])
        ORDER BY payout_row_id, position`

const merchantPartners = (count: number) => `
        SELECT a.merchant_id, o.id, o.name
        FROM operator_payment_accounts a JOIN operators o ON o.id = a.operator_id
        WHERE a.merchant_id IN (${Array.from({ length: count }, (_, i) => `$${i + 1}`).join(",")})
        ORDER BY o.name, o.id`

// ---- chargebacks (src/partner/finance/chargebacks/ChargebacksRepo.ts) -------------------------------

const CHARGEBACK_COLUMNS = `
        SELECT c.id, c.operator_id, o.name AS operator_name, c.booking_id, b.confirmation_code,
          to_char(b.experience_date, 'YYYY-MM-DD') AS experience_date, b.status AS booking_status,
          c.amount_minor::text, c.currency, c.fee_minor::text, c.settled_currency, c.settled_amount_minor::text,
          c.settled_fee_minor::text, c.dispute_reference, c.dispute_status, c.reason,
          to_char(c.transaction_date, 'YYYY-MM-DD') AS transaction_date,
          to_char(c.registered_at, 'YYYY-MM-DD') AS registered_at, to_char(c.respond_by, 'YYYY-MM-DD') AS respond_by,
          to_char(c.settled_on, 'YYYY-MM-DD') AS settled_on, c.first_seen_at,
          (extract(epoch FROM c.first_seen_at) * 1000000)::bigint::text AS seen_micros
        FROM chargebacks c
        JOIN bookings b ON b.id = c.booking_id
        JOIN operators o ON o.id = c.operator_id`

// ---- pay-later (src/partner/finance/payLater/PayLaterReadRepo.ts) -----------------------------------

const PAY_LATER_COLUMNS = `
          SELECT c.id, c.operator_id, o.name AS operator_name, b.id AS booking_id, b.confirmation_code,
            b.experience_date::text AS experience_date,
            CASE WHEN b.status = 'RESERVED' THEN 'CONFIRMED' ELSE b.status END AS booking_status, b.tour_name,
            c.amount_minor::int AS amount_minor, trim(c.currency) AS currency, c.charge_at,
            ((extract(epoch FROM c.charge_at) * 1000000)::bigint)::text AS charge_micros,
            c.state, c.retrying, c.refunded, c.attempts, c.last_attempt_at, c.next_attempt_at, c.failure_message,
            c.final_deadline_at, c.collected_at
          FROM pay_later_charges c JOIN bookings b ON b.id = c.booking_id JOIN operators o ON o.id = c.operator_id`

const PAY_LATER_TOTALS = `
          SELECT c.state, trim(c.currency) AS currency, count(*)::int AS charges, sum(c.amount_minor)::float8 AS amount_minor
          FROM pay_later_charges c JOIN bookings b ON b.id = c.booking_id`

// ---- statements (src/partner/finance/statements/StatementsRepo.ts) ----------------------------------

const STATEMENT_NUMBERS = `
        SELECT operator_id, number FROM commission_statements
        WHERE operator_id = ANY($1::uuid[])
          AND month = ($2::timestamptz AT TIME ZONE 'UTC')::date`

const STATEMENT_SECTIONS = `
        SELECT operator_id, currency,
          count(*) FILTER (WHERE type = 'sale')::int AS sales,
          count(*) FILTER (WHERE type = 'cancellation')::int AS cancellations,
          count(*) FILTER (WHERE type = 'difference')::int AS differences,
          sum(gross_minor)::int8 AS gross_minor,
          sum(commission_minor)::int8 AS commission_minor,
          sum(reserve_fee_minor)::int8 AS reserve_fee_minor,
          count(*)::int AS entries_total,
          bool_or(pending) AS pending
        FROM commission_entries
        WHERE operator_id = ANY($1::uuid[])
          AND occurred_at >= $2 AND occurred_at < $3
        GROUP BY operator_id, currency`

const STATEMENT_ENTRIES = `
        SELECT s.operator_id, e.type, e.occurred_at, s.currency, b.confirmation_code,
          coalesce(b.tour_name, t.title, '') AS tour, b.experience_date,
          e.gross_minor, e.commission_rate_percent, e.commission_minor, e.reserve_fee_minor
        FROM unnest($1::uuid[], $2::text[]) AS s(operator_id, currency)
        CROSS JOIN LATERAL (
          SELECT * FROM commission_entries c
          WHERE c.operator_id = s.operator_id AND c.currency = s.currency
            AND c.occurred_at >= $3 AND c.occurred_at < $4
          ORDER BY c.occurred_at, c.id
          LIMIT $5
        ) e
        JOIN bookings b ON b.id = e.booking_id
        LEFT JOIN tours t ON t.id = b.tour_id
        ORDER BY s.operator_id, s.currency, e.occurred_at, e.id`

// ---- invoices (src/partner/finance/invoices/FinanceInvoicesRepo.ts, src/invoices/InvoicesRepo.ts) ---

const MERCHANTS_OF = `
          SELECT DISTINCT merchant_id FROM operator_payment_accounts
          WHERE operator_id = ANY($1::uuid[])`

const DOCUMENT_COLUMNS =
  `i.id, i.type, i.number, i.status, i.merchant_id, to_char(i.period_month, 'YYYY-MM') AS period_month,
    i.currency, i.issue_date, i.due_date, i.issued_at, i.seller_name, i.seller_org_number, i.seller_address,
    i.seller_email, i.seller_bank_account, i.buyer_name, i.buyer_org_number, i.buyer_operator_ids::text[] AS buyer_operator_ids,
    i.vat_rate_percent, i.net_minor, i.vat_minor, i.gross_minor, i.deducted_minor, i.payable_minor`

const INVOICE_LINES = `
    SELECT l.invoice_id, l.line_no, l.kind, l.booking_id, l.operator_id, l.operator_name, l.confirmation_code, l.tour,
      l.experience_date, l.description, l.commission_rate_percent, l.booking_gross_minor, l.net_minor, l.vat_minor,
      l.gross_minor, l.deducted_minor, l.corrects_invoice_id, c.number AS corrects_number, l.original_net_minor,
      l.cancellation_fee_minor
    FROM commission_invoice_lines l
    LEFT JOIN commission_invoices c ON c.id = l.corrects_invoice_id
    WHERE l.invoice_id = ANY($1::uuid[])
    ORDER BY l.invoice_id, l.line_no`

const OPERATOR_NAMES = `
          SELECT id, name FROM operators WHERE id = ANY($1::uuid[]) ORDER BY name, id`

/** InvoiceFileLinks' purpose and secret label. */
const LINK_PURPOSE = "commission-invoice-file"
const LINK_LABEL = "commission-invoice-file-links"

// ---- the handler -------------------------------------------------------------------------------------

const DAY = /^\d{4}-\d{2}-\d{2}$/
const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/

const groupBy = <A>(rows: ReadonlyArray<A>, key: (a: A) => string) => {
  const map = new Map<string, Array<A>>()
  for (const row of rows) {
    const k = key(row)
    const list = map.get(k)
    if (list) list.push(row)
    else map.set(k, [row])
  }
  return map
}

export const financeFloor = (deps: FinanceFloorDeps) => {
  const { pool, refuse } = deps
  let linkSecret: Uint8Array | undefined

  const optional = (params: URLSearchParams, name: string, pattern?: RegExp) => {
    const value = params.get(name) ?? undefined
    if (value !== undefined && pattern !== undefined && !pattern.test(value)) refuse(400, `${name} is malformed`)
    return value
  }
  const limitOf = (params: URLSearchParams, fallback: number) => {
    const text = params.get("limit")
    if (text === null) return fallback
    if (!/^\d{1,9}$/.test(text) || Number(text) < 1 || Number(text) > 100) refuse(400, "limit must be 1 to 100")
    return Number(text)
  }
  const operatorIdsFor = (key: FinanceKey, partnerId: string | undefined) => {
    if (partnerId === undefined) return key.partners.map((p) => p.id)
    if (!key.partners.some((p) => p.id === partnerId)) {
      refuse(404, "partner_id is not one of this key's operators (not found, or not yours)")
    }
    return [partnerId]
  }
  const decode = (cursor: string | undefined, filters: Record<string, unknown>): CursorPosition | undefined => {
    if (cursor === undefined) return undefined
    const decoded = decodeCursor(deps.cursorSecret(), cursor, filterFingerprint(filters))
    if (Either.isLeft(decoded)) return refuse(400, `cursor ${decoded.left}`)
    return decoded.right
  }
  const encode = (position: CursorPosition, filters: Record<string, unknown>) =>
    encodeCursor(deps.cursorSecret(), position, filterFingerprint(filters))

  const payouts = async (key: FinanceKey, params: URLSearchParams) => {
    const from = optional(params, "from", DAY)
    const to = optional(params, "to", DAY)
    const partnerId = optional(params, "partner_id")
    const operatorIds = operatorIdsFor(key, partnerId)
    const filters = { list: "payouts", from, to, partner_id: partnerId }
    const after = decode(optional(params, "cursor"), filters)
    const limit = limitOf(params, 50)
    const clauses = [`p.merchant_id IN (
          SELECT merchant_id FROM operator_payment_accounts WHERE operator_id = ANY($1::uuid[]))`]
    const values: Array<unknown> = [toPgArray(operatorIds)]
    if (from) clauses.push(`p.settlement_date >= $${values.push(from)}::date`)
    if (to) clauses.push(`p.settlement_date <= $${values.push(to)}::date`)
    if (after) {
      clauses.push(
        `(p.sort_at, p.id) < ($${values.push(microsToIso(after.createdMicros))}::timestamptz, $${
          values.push(after.id)
        }::uuid)`
      )
    }
    const where = clauses.length === 1 ? clauses[0] : `(${clauses.join(" AND ")})`
    const text = `${PAYOUT_COLUMNS}
        WHERE ${where}
        ORDER BY p.sort_at DESC, p.id DESC
        LIMIT $${values.push(limit + 1)}`
    const rows = (await pool.query<PayoutRow>(text, values)).rows
    const page = rows.slice(0, limit)
    if (page.length === 0) return { data: [], next_cursor: null }
    const merchants = [...new Set(page.map((p) => p.merchant_id))]
    const [adjustments, partners] = await Promise.all([
      pool.query<AdjustmentRow>(ADJUSTMENTS, [toPgArray(page.map((p) => p.id))]),
      pool.query<MerchantPartnerRow>(merchantPartners(merchants.length), merchants)
    ])
    const byPayout = groupBy(adjustments.rows, (a) => a.payout_row_id)
    const byMerchant = groupBy(partners.rows, (p) => p.merchant_id)
    const last = page[page.length - 1]!
    return {
      data: page.map((p) => toPayout(p, byPayout.get(p.id) ?? [], byMerchant.get(p.merchant_id) ?? [])),
      next_cursor: rows.length > limit ? encode({ createdMicros: last.sort_micros, id: last.id }, filters) : null
    }
  }

  const chargebacks = async (key: FinanceKey, params: URLSearchParams) => {
    const from = optional(params, "from", DAY)
    const to = optional(params, "to", DAY)
    const partnerId = optional(params, "partner_id")
    const operatorIds = operatorIdsFor(key, partnerId)
    const filters = { list: "chargebacks", from, to, partner_id: partnerId }
    const after = decode(optional(params, "cursor"), filters)
    const limit = limitOf(params, 50)
    const values: Array<unknown> = [toPgArray(operatorIds)]
    const clauses = ["c.operator_id = ANY($1::uuid[])", LISTED]
    if (from) clauses.push(`c.first_seen_at >= ($${values.push(from)}::date::timestamp AT TIME ZONE 'UTC')`)
    if (to) clauses.push(`c.first_seen_at < (($${values.push(to)}::date + 1)::timestamp AT TIME ZONE 'UTC')`)
    if (after) {
      clauses.push(
        `(c.first_seen_at, c.id) < ($${values.push(microsToIso(after.createdMicros))}::timestamptz, $${
          values.push(after.id)
        }::uuid)`
      )
    }
    const text = `${CHARGEBACK_COLUMNS}
        WHERE (${clauses.join(" AND ")})
        ORDER BY c.first_seen_at DESC, c.id DESC
        LIMIT $${values.push(limit + 1)}`
    const rows = (await pool.query<ChargebackRow>(text, values)).rows
    const page = rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      data: page.map(toChargeback),
      next_cursor: rows.length > limit && last
        ? encode({ createdMicros: last.seen_micros, id: last.id }, filters)
        : null
    }
  }

  const payLater = async (key: FinanceKey, params: URLSearchParams) => {
    const state = optional(params, "state")
    if (state !== undefined && !(PAY_LATER_STATES as ReadonlyArray<string>).includes(state)) {
      refuse(400, "state is not a pay-later state")
    }
    const from = optional(params, "from", DAY)
    const to = optional(params, "to", DAY)
    const partnerId = optional(params, "partner_id")
    const operatorIds = operatorIdsFor(key, partnerId)
    const limit = limitOf(params, PAY_LATER_DEFAULT_LIMIT)
    const bound = { state: state ?? null, from: from ?? null, to: to ?? null, partner_id: partnerId ?? null }
    const after = decode(optional(params, "cursor"), bound)
    const where = (withCursor: boolean) => {
      const values: Array<unknown> = [toPgArray(operatorIds)]
      const clauses = ["c.operator_id = ANY($1::uuid[])", LISTED]
      if (state !== undefined) clauses.push(`c.state = $${values.push(state)}`)
      if (from !== undefined) {
        clauses.push(`c.charge_at >= ($${values.push(from)}::date)::timestamp AT TIME ZONE 'UTC'`)
      }
      if (to !== undefined) clauses.push(`c.charge_at < ($${values.push(to)}::date + 1)::timestamp AT TIME ZONE 'UTC'`)
      if (withCursor && after !== undefined) {
        clauses.push(
          `(c.charge_at, c.id) > ($${values.push(microsToIso(after.createdMicros))}::timestamptz, $${
            values.push(after.id)
          }::uuid)`
        )
      }
      return { text: `(${clauses.join(" AND ")})`, values }
    }
    const pageWhere = where(true)
    const totalsWhere = where(false)
    const [rows, totals] = await Promise.all([
      pool.query<PayLaterChargeRow>(
        `${PAY_LATER_COLUMNS}
          WHERE ${pageWhere.text}
          ORDER BY c.charge_at, c.id
          LIMIT $${pageWhere.values.push(limit + 1)}`,
        pageWhere.values
      ),
      pool.query<{ state: string; currency: string; charges: number; amount_minor: number }>(
        `${PAY_LATER_TOTALS}
          WHERE ${totalsWhere.text}
          GROUP BY c.state, trim(c.currency)
          ORDER BY c.state, trim(c.currency)`,
        totalsWhere.values
      )
    ])
    const page = rows.rows.slice(0, limit)
    const last = page[page.length - 1]
    return {
      totals: totals.rows.map((t) => ({
        state: t.state,
        currency: t.currency,
        charges: t.charges,
        amount_minor: t.amount_minor
      })),
      data: page.map(toCharge),
      next_cursor: rows.rows.length > limit && last !== undefined
        ? encode({ createdMicros: last.charge_micros, id: last.id }, bound)
        : null
    }
  }

  const statements = async (key: FinanceKey, params: URLSearchParams) => {
    const period = statementRules.monthPeriod(optional(params, "month") ?? statementRules.lastMonth(Date.now()))
    if (Either.isLeft(period)) return refuse(400, period.left.detail)
    const operatorIds = operatorIdsFor(key, optional(params, "partner_id"))
    const partners = key.partners.filter((k) => operatorIds.includes(k.id))
    const head = {
      month: period.right.month,
      period_start: period.right.start.toISOString(),
      period_end: period.right.end.toISOString()
    }
    if (statementRules.tooMany(partners.length)) return { ...head, too_many: true, statements: [] }
    const { end, start } = period.right
    const ids = toPgArray(partners.map((p) => p.id))
    const [sections, numbers] = await Promise.all([
      pool.query<statementRules.SectionRow>(STATEMENT_SECTIONS, [ids, start, end]),
      pool.query<{ operator_id: string; number: string }>(STATEMENT_NUMBERS, [ids, start])
    ])
    const entries = sections.rows.length === 0 ? [] : (await pool.query<statementRules.EntryRow>(STATEMENT_ENTRIES, [
      toPgArray(sections.rows.map((s) => s.operator_id)),
      toPgArray(sections.rows.map((s) => s.currency)),
      start,
      end,
      statementRules.STATEMENT_MAX_ENTRIES
    ])).rows
    return {
      ...head,
      too_many: false,
      statements: statementRules.statements({
        partners,
        numbers: new Map(numbers.rows.map((n) => [n.operator_id, n.number])),
        sections: sections.rows,
        entries
      })
    }
  }

  const invoices = async (key: FinanceKey, params: URLSearchParams) => {
    const periodFrom = optional(params, "period_from", MONTH)
    const periodTo = optional(params, "period_to", MONTH)
    const type = optional(params, "type")
    if (type !== undefined && type !== "invoice" && type !== "credit_note") refuse(400, "type is malformed")
    const partnerId = optional(params, "partner_id")
    const operatorIds = operatorIdsFor(key, partnerId)
    const filters = { period_from: periodFrom, period_to: periodTo, type, partner_id: partnerId }
    const after = decode(optional(params, "cursor"), filters)
    const limit = limitOf(params, INVOICE_LIMIT_DEFAULT)
    const merchantIds = (await pool.query<{ merchant_id: string }>(MERCHANTS_OF, [toPgArray(operatorIds)])).rows.map((
      r
    ) => r.merchant_id)
    let docs: Array<{ listKey: string; doc: ReturnType<typeof toDocument> }> = []
    if (merchantIds.length > 0) {
      const values: Array<unknown> = [toPgArray(merchantIds)]
      const and = (clause: (n: number) => string, value: unknown) => clause(values.push(value))
      const text = `
          SELECT ${DOCUMENT_COLUMNS}, i.list_key::text AS list_key
          FROM commission_invoices i
          WHERE i.merchant_id = ANY($1::text[])
            ${periodFrom === undefined ? "" : and((n) => `AND i.period_month >= $${n}::date`, periodFrom + "-01")}
            ${periodTo === undefined ? "" : and((n) => `AND i.period_month <= $${n}::date`, periodTo + "-01")}
            ${type === undefined ? "" : and((n) => `AND i.type = $${n}`, type)}
            ${
        after === undefined
          ? ""
          : `AND (i.list_key, i.id) < ($${values.push(after.createdMicros)}::int8, $${values.push(after.id)}::uuid)`
      }
          ORDER BY i.list_key DESC, i.id DESC
          LIMIT $${values.push(limit + 1)}`
      const rows = (await pool.query<DocumentRow & { list_key: string }>(text, values)).rows
      const lines = rows.length === 0
        ? []
        : (await pool.query<LineRow>(INVOICE_LINES, [toPgArray(rows.map((r) => r.id))])).rows
      const byInvoice = groupBy(lines, (l) => l.invoice_id)
      docs = rows.map((row) => ({ listKey: row.list_key, doc: toDocument(row, byInvoice.get(row.id) ?? []) }))
    }
    const page = docs.slice(0, limit)
    const names = new Map(
      (await pool.query<{ id: string; name: string }>(OPERATOR_NAMES, [
        toPgArray([...new Set(page.flatMap((p) => p.doc.buyer.operatorIds))])
      ])).rows.map((o) => [o.id, o])
    )
    linkSecret ??= deriveLinkSecret(deps.cursorSecret(), LINK_LABEL)
    const now = Date.now()
    const exp = Math.floor(now / 1000) + INVOICE_LINK_SECONDS
    const expiresAt = new Date(exp * 1000).toISOString()
    const link = (id: string, kind: "pdf" | "csv") => {
      const file = `${id}.${kind}`
      return `${deps.base()}${INVOICE_FILES_PATH}/${file}?exp=${exp}&sig=${
        signLink(linkSecret!, LINK_PURPOSE, file, exp)
      }`
    }
    const last = page[page.length - 1]
    return {
      data: page.map(({ doc }) =>
        toApi(doc, doc.buyer.operatorIds.flatMap((id) => names.get(id) ?? []), {
          pdf_url: link(doc.id, "pdf"),
          csv_url: link(doc.id, "csv"),
          expires_at: expiresAt
        })
      ),
      next_cursor: docs.length > limit && last
        ? encode({ createdMicros: last.listKey, id: last.doc.id }, filters)
        : null
    }
  }

  const routes: Record<string, (key: FinanceKey, params: URLSearchParams) => Promise<unknown>> = {
    "/api/v1/finance/payouts": payouts,
    "/api/v1/finance/chargebacks": chargebacks,
    "/api/v1/finance/pay-later": payLater,
    "/api/v1/finance/statements": statements,
    "/api/v1/finance/invoices": invoices
  }
  return routes
}
