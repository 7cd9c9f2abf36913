/**
 * The statement rules (spec §2 "Finance records" Statement, §4, §8): the month and its UTC bounds,
 * the default month, the operators-in-view limit, and the statement of an operator shaped from its
 * sections and first entries. Pure: no I/O.
 */
import { Either } from "effect"
import type { EntryType } from "../../../commissions/ledger.js"
import { InvalidRequest } from "../../../domain/errors.js"

/** More operators in view than this answers `too_many` with no statements. */
export const STATEMENTS_MAX_OPERATORS = 6
/** At most this many entries listed per section (oldest first); the sums cover them all. */
export const STATEMENT_MAX_ENTRIES = 1000

export const MONTH_PATTERN = /^(\d{4})-(0[1-9]|1[0-2])$/
/** The months a statement can be asked for (the last one is that of LAST_DAY, src/domain/dates.ts). */
export const FIRST_MONTH = "1970-01"
export const LAST_MONTH = "9998-12"

export interface MonthPeriod {
  readonly month: string
  /** First instant of the month, UTC, inclusive. */
  readonly start: Date
  /** First instant of the next month, UTC, exclusive. */
  readonly end: Date
}

const pad = (n: number, width: number) => String(n).padStart(width, "0")

/** The UTC bounds of a `YYYY-MM` month; a malformed month is a 400 naming `month`. */
export const monthPeriod = (month: string): Either.Either<MonthPeriod, InvalidRequest> => {
  const m = MONTH_PATTERN.exec(month)
  if (m === null) {
    return Either.left(
      new InvalidRequest({ detail: "month must be a month YYYY-MM (UTC), e.g. 2026-10", field: "month" })
    )
  }
  if (month < FIRST_MONTH || month > LAST_MONTH) {
    return Either.left(
      new InvalidRequest({ detail: `month must be from ${FIRST_MONTH} to ${LAST_MONTH}`, field: "month" })
    )
  }
  const year = Number(m[1])
  const index = Number(m[2]) - 1
  return Either.right({ month, start: new Date(Date.UTC(year, index, 1)), end: new Date(Date.UTC(year, index + 1, 1)) })
}

/** The month before the UTC month of `nowMs` (the default). */
export const lastMonth = (nowMs: number): string => {
  const now = new Date(nowMs)
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1))
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}`
}

export const tooMany = (operators: number) => operators > STATEMENTS_MAX_OPERATORS

export interface Partner {
  readonly id: string
  readonly name: string
}

/** The sums of one (operator, currency) section of the month, over all its entries. */
interface SectionSums {
  readonly currency: string
  readonly sales: number
  readonly cancellations: number
  readonly differences: number
  readonly gross_minor: number
  readonly commission_minor: number
  readonly reserve_fee_minor: number
  readonly entries_total: number
}

/** One (operator, currency) of the month as the database sums it over all its entries. */
export interface SectionRow extends SectionSums {
  readonly operator_id: string
  readonly pending: boolean
}

export interface StatementEntry {
  readonly type: EntryType
  readonly occurred_at: string
  readonly confirmation_code: string
  readonly tour: string
  readonly experience_date: string | null
  readonly gross_minor: number
  readonly commission_rate_percent: number
  readonly commission_minor: number
  readonly reserve_fee_minor: number
}

/** An entry as the database gives it: its operator, currency and time, then the entry's figures. */
export interface EntryRow extends Omit<StatementEntry, "occurred_at"> {
  readonly operator_id: string
  readonly occurred_at: Date
  readonly currency: string
}

export interface StatementSection extends SectionSums {
  readonly entries: ReadonlyArray<StatementEntry>
}

export interface Statement {
  readonly partner: Partner
  readonly number: string
  readonly draft: boolean
  readonly sections: ReadonlyArray<StatementSection>
}

const toEntry = (e: EntryRow): StatementEntry => ({
  type: e.type,
  occurred_at: e.occurred_at.toISOString(),
  confirmation_code: e.confirmation_code,
  tour: e.tour,
  experience_date: e.experience_date,
  gross_minor: e.gross_minor,
  commission_rate_percent: e.commission_rate_percent,
  commission_minor: e.commission_minor,
  reserve_fee_minor: e.reserve_fee_minor
})

/**
 * The statements of the operators in view that have entries in the month (an operator without any
 * has no statement), by operator name; sections by currency; entries as read (oldest first, at most
 * STATEMENT_MAX_ENTRIES per section). An operator whose number is missing is a broken ledger: throw.
 */
export const statements = (input: {
  readonly partners: ReadonlyArray<Partner>
  readonly numbers: ReadonlyMap<string, string>
  readonly sections: ReadonlyArray<SectionRow>
  readonly entries: ReadonlyArray<EntryRow>
}): ReadonlyArray<Statement> => {
  const entriesBy = new Map<string, Array<StatementEntry>>()
  for (const e of input.entries) {
    const k = `${e.operator_id}/${e.currency}`
    const list = entriesBy.get(k) ?? []
    if (list.length < STATEMENT_MAX_ENTRIES) list.push(toEntry(e))
    entriesBy.set(k, list)
  }
  const partners = [...input.partners].sort((a, b) => a.name.localeCompare(b.name, "en") || a.id.localeCompare(b.id))
  const out: Array<Statement> = []
  for (const partner of partners) {
    const rows = input.sections.filter((s) => s.operator_id === partner.id)
      .sort((a, b) => a.currency.localeCompare(b.currency))
    if (rows.length === 0) continue
    const number = input.numbers.get(partner.id)
    if (number === undefined) throw new Error(`no statement number for operator ${partner.id}`)
    out.push({
      partner,
      number,
      draft: rows.some((r) => r.pending),
      sections: rows.map((r) => ({
        currency: r.currency,
        sales: r.sales,
        cancellations: r.cancellations,
        differences: r.differences,
        gross_minor: r.gross_minor,
        commission_minor: r.commission_minor,
        reserve_fee_minor: r.reserve_fee_minor,
        entries_total: r.entries_total,
        entries: entriesBy.get(`${partner.id}/${r.currency}`) ?? []
      }))
    })
  }
  return out
}
