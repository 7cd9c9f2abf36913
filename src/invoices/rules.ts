/**
 * The rules of commission invoices and credit notes (docs/api/invoices.md), pure:
 *
 * - `commission_minor` in the ledger (commission_entries) is the commission NET of VAT (MVA): the
 *   operators' contracts state a commission rate excluding MVA. Each line's VAT is its net × the VAT
 *   rate, rounded half away from zero to a minor unit; a document's totals are the sums of its lines.
 * - The payment provider's split withholds the net commission when the guest pays (and gives it back
 *   on a refund): a line's `deducted` is its net. What the split does not take, the VAT, is still
 *   payable (`payable = gross − deducted`); a credit note's payable is negative (owed to the operator).
 * - A close (one legal entity, one delivery month) invoices every final (not pending) entry of that
 *   entity that occurred before the month's end and is on no document yet: positive commission on the
 *   month's invoice (a line per booking and currency), commission given back (cancellations, negative
 *   differences) on the month's credit note, each line correcting the latest invoice that billed the
 *   booking. A pending entry waits for the first close after it becomes final. An entry giving back
 *   commission on a booking no invoice billed yet waits too (a credit note corrects an invoice).
 */

export type DocumentType = "invoice" | "credit_note"
export type LineKind = "commission" | "refund_credit"
export type DocumentStatus = "open" | "settled" | "credited"

/** A ledger entry as a close reads it (final, uninvoiced, with its booking's facts). */
export interface CloseEntry {
  readonly id: string
  readonly booking_id: string
  readonly operator_id: string
  readonly type: string
  readonly occurred_at: Date
  readonly currency: string
  readonly gross_minor: number
  readonly commission_rate_percent: number
  readonly commission_minor: number
  readonly confirmation_code: string
  readonly tour: string | null
  readonly experience_date: string | null
}

/** What the documents issued so far billed and credited for a booking (in one currency). */
export interface BookingBilling {
  /** The latest invoice with a commission line for the booking. */
  readonly invoiceId: string
  readonly invoiceNumber: string
  /** Its commission line's net. */
  readonly lineNetMinor: number
  /** Net commission billed on every invoice, and credited (negative) on every credit note. */
  readonly billedNetMinor: number
  readonly creditedNetMinor: number
}

/** What a document line says, planned or issued. */
export interface LineFigures {
  readonly kind: LineKind
  readonly bookingId: string
  readonly operatorId: string
  readonly confirmationCode: string
  readonly tour: string | null
  readonly experienceDate: string | null
  readonly description: string
  readonly commissionRatePercent: number | null
  readonly bookingGrossMinor: number
  readonly netMinor: number
  readonly vatMinor: number
  readonly grossMinor: number
  readonly deductedMinor: number
  readonly correctsInvoiceId: string | null
  readonly originalNetMinor: number | null
  readonly cancellationFeeMinor: number | null
}

/** A line of a document about to be issued: its figures, and the ledger entries it bills. */
export interface PlannedLine extends LineFigures {
  readonly firstOccurredAt: Date
  readonly entryIds: ReadonlyArray<string>
}

export interface Totals {
  readonly netMinor: number
  readonly vatMinor: number
  readonly grossMinor: number
  readonly deductedMinor: number
  readonly payableMinor: number
}

/** VAT of a net amount at `ratePercent`, rounded half away from zero (so a credit mirrors its invoice). */
export const vatOf = (netMinor: number, ratePercent: number): number =>
  Math.sign(netMinor) * Math.round((Math.abs(netMinor) * ratePercent) / 100)

/** A document's totals: the sums of its lines. */
export const totalsOf = (
  lines: ReadonlyArray<Pick<PlannedLine, "netMinor" | "vatMinor" | "deductedMinor">>
): Totals => {
  const sum = (f: (l: (typeof lines)[number]) => number) => lines.reduce((n, l) => n + f(l), 0)
  const netMinor = sum((l) => l.netMinor)
  const vatMinor = sum((l) => l.vatMinor)
  const deductedMinor = sum((l) => l.deductedMinor)
  return {
    netMinor,
    vatMinor,
    grossMinor: netMinor + vatMinor,
    deductedMinor,
    payableMinor: netMinor + vatMinor - deductedMinor
  }
}

/** An invoice is `open` while something is payable, else `settled`; a credit note is `credited`. */
export const statusOf = (type: DocumentType, payableMinor: number): DocumentStatus =>
  type === "credit_note" ? "credited" : payableMinor > 0 ? "open" : "settled"

/** The first day of a YYYY-MM month, and of the month after it (YYYY-MM-DD). */
export const monthStart = (month: string) => `${month}-01`
export const nextMonth = (month: string): string => {
  const [y, m] = month.split("-").map(Number) as [number, number]
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, "0")}`
}
export const previousMonth = (month: string): string => {
  const [y, m] = month.split("-").map(Number) as [number, number]
  return m === 1 ? `${y - 1}-12` : `${y}-${String(m - 1).padStart(2, "0")}`
}
/** The UTC month (YYYY-MM) of an instant. */
export const monthOf = (at: Date) => at.toISOString().slice(0, 7)
/** The last day of a month (YYYY-MM-DD). */
export const monthEnd = (month: string): string => {
  const d = new Date(`${nextMonth(month)}-01T00:00:00Z`)
  d.setUTCDate(0)
  return d.toISOString().slice(0, 10)
}
/** `day` plus `days` days (YYYY-MM-DD, UTC). */
export const addDays = (day: string, days: number): string => {
  const d = new Date(`${day}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

/** A document's number: its series' prefix and sequence, six digits at least (INV-000042). */
export const documentNumber = (prefix: string, sequence: number) => `${prefix}${String(sequence).padStart(6, "0")}`

const describe = (kind: LineKind, e: CloseEntry) =>
  `${kind === "commission" ? "Commission" : "Commission credited"} ${e.confirmation_code}` +
  (e.tour ? ` – ${e.tour}` : "") + (e.experience_date ? ` (${e.experience_date})` : "")

const groupBy = <A>(xs: ReadonlyArray<A>, key: (a: A) => string): Map<string, Array<A>> => {
  const map = new Map<string, Array<A>>()
  for (const x of xs) {
    const k = key(x)
    const group = map.get(k)
    if (group) group.push(x)
    else map.set(k, [x])
  }
  return map
}

const byTime = (a: CloseEntry, b: CloseEntry) =>
  a.occurred_at.getTime() - b.occurred_at.getTime() || (a.id < b.id ? -1 : 1)

const lineOf = (kind: LineKind, entries: ReadonlyArray<CloseEntry>, vatPercent: number) => {
  const sorted = [...entries].sort(byTime)
  const first = sorted[0]!
  const netMinor = sorted.reduce((n, e) => n + e.commission_minor, 0)
  const vatMinor = vatOf(netMinor, vatPercent)
  const rates = new Set(sorted.map((e) => e.commission_rate_percent))
  return {
    kind,
    bookingId: first.booking_id,
    operatorId: first.operator_id,
    confirmationCode: first.confirmation_code,
    tour: first.tour,
    experienceDate: first.experience_date,
    firstOccurredAt: first.occurred_at,
    description: describe(kind, first),
    commissionRatePercent: rates.size === 1 ? first.commission_rate_percent : null,
    bookingGrossMinor: sorted.reduce((n, e) => n + e.gross_minor, 0),
    netMinor,
    vatMinor,
    grossMinor: netMinor + vatMinor,
    deductedMinor: netMinor,
    entryIds: sorted.map((e) => e.id),
    correctsInvoiceId: null,
    originalNetMinor: null,
    cancellationFeeMinor: null
  } satisfies PlannedLine
}

const lineOrder = (a: PlannedLine, b: PlannedLine) =>
  a.firstOccurredAt.getTime() - b.firstOccurredAt.getTime() ||
  (a.confirmationCode < b.confirmationCode ? -1 : a.confirmationCode > b.confirmationCode ? 1 : 0)

/**
 * The invoice lines of a close, per currency: one per booking with positive commission (its
 * entries' commission summed), oldest first. Entries with zero commission are not invoiced.
 */
export const invoiceLines = (
  entries: ReadonlyArray<CloseEntry>,
  vatPercent: number
): Map<string, ReadonlyArray<PlannedLine>> => {
  const out = new Map<string, ReadonlyArray<PlannedLine>>()
  for (const [currency, ofCurrency] of groupBy(entries.filter((e) => e.commission_minor > 0), (e) => e.currency)) {
    const lines = [...groupBy(ofCurrency, (e) => e.booking_id).values()].map((g) => lineOf("commission", g, vatPercent))
    out.set(currency, lines.sort(lineOrder))
  }
  return out
}

/**
 * The credit note lines of a close, per currency: one per booking whose commission was given back,
 * correcting the latest invoice that billed it (`billing`, after this close's invoice is issued);
 * with a cancellation among its entries, the cancellation fee kept is what stays billed for the
 * booking (billed − every credit so far, this one included; never below 0). Bookings no invoice
 * billed are left out (their entries wait for a later close).
 */
export const creditLines = (
  entries: ReadonlyArray<CloseEntry>,
  vatPercent: number,
  billing: (bookingId: string, currency: string) => BookingBilling | undefined
): Map<string, ReadonlyArray<PlannedLine>> => {
  const out = new Map<string, ReadonlyArray<PlannedLine>>()
  for (const [currency, ofCurrency] of groupBy(entries.filter((e) => e.commission_minor < 0), (e) => e.currency)) {
    const lines: Array<PlannedLine> = []
    for (const group of groupBy(ofCurrency, (e) => e.booking_id).values()) {
      const billed = billing(group[0]!.booking_id, currency)
      if (billed === undefined) continue
      const line = lineOf("refund_credit", group, vatPercent)
      const kept = billed.billedNetMinor + billed.creditedNetMinor + line.netMinor
      lines.push({
        ...line,
        correctsInvoiceId: billed.invoiceId,
        originalNetMinor: billed.lineNetMinor,
        cancellationFeeMinor: group.some((e) => e.type === "cancellation") ? Math.max(0, kept) : null
      })
    }
    if (lines.length > 0) out.set(currency, lines.sort(lineOrder))
  }
  return out
}

/** Seller's VAT registration as printed: `NO 999 999 999 MVA`. */
export const vatNumberOf = (orgNumber: string) => {
  const digits = orgNumber.replace(/\D/g, "")
  return digits.length === 9
    ? `NO ${digits.slice(0, 3)} ${digits.slice(3, 6)} ${digits.slice(6)} MVA`
    : `NO ${orgNumber} MVA`
}

/** Minor units as a decimal with a comma (Norwegian spreadsheets): -12345 → "-123,45". */
export const decimalComma = (minor: number) => {
  const sign = minor < 0 ? "-" : ""
  const abs = Math.abs(minor)
  return `${sign}${Math.floor(abs / 100)},${String(abs % 100).padStart(2, "0")}`
}
