/**
 * Rules of the daily manifest, as plain functions: which rows are live, how check-ins count, how rows
 * group into departures, the order of everything, and the totals.
 *
 * - A departure is one product and rate at one local start time in one time zone, of one
 *   booking-system account. Titles are labels taken from the departure's first row: two products
 *   with the same title stay apart.
 * - Live rows (CONFIRMED, RESERVED) go into departures; CANCELLED rows only into `cancelled`.
 * - Counts are passengers, not rows: `checked_in` adds `present` (capped at `participants`, or all
 *   participants when null) of checked_in rows; `no_show` adds the participants of no_show rows.
 * - Order: departures by start time (null last), product title, rate title (null last, compared
 *   for people: case and accents second, numbers by value), then time zone and ids so it is total.
 *   Rows by guest name (null last), reference (null last), id. Cancelled rows by their
 *   departure's order, then like rows.
 */
import type { Departure, Manifest, ManifestRow, PaxLine } from "./schemas.js"

/** What identifies a row's departure, beyond what the API shows. */
export interface DepartureKey {
  readonly startTime: string | null
  readonly timezone: string
  readonly productTitle: string | null
  readonly rateTitle: string | null
  readonly accountId: string
  readonly productId: string
  readonly rateId: string | null
}

export interface ManifestEntry {
  readonly departure: DepartureKey
  readonly row: ManifestRow
}

export interface ManifestDay {
  readonly date: string
  readonly timezone: string
  readonly synced_at: string | null
}

export const isLive = (row: Pick<ManifestRow, "status">) => row.status !== "CANCELLED"

/** Passengers of the row who are checked in. */
export const checkedInOf = (row: Pick<ManifestRow, "participants" | "check_in">) =>
  row.check_in.status === "checked_in" ? Math.min(row.check_in.present ?? row.participants, row.participants) : 0

/** Passengers of the row marked as no-show. */
export const noShowOf = (row: Pick<ManifestRow, "participants" | "check_in">) =>
  row.check_in.status === "no_show" ? row.participants : 0

const collator = new Intl.Collator("en", { numeric: true })

/** Text for people: collated, exact text as the tie-break, null last. */
const compareText = (a: string | null, b: string | null) => {
  if (a === b) return 0
  if (a === null) return 1
  if (b === null) return -1
  return collator.compare(a, b) || (a < b ? -1 : 1)
}

/** Ids and HH:MM labels: code-point order, null last. */
const compareCode = (a: string | null, b: string | null) => {
  if (a === b) return 0
  if (a === null) return 1
  if (b === null) return -1
  return a < b ? -1 : 1
}

export const compareDepartures = (a: DepartureKey, b: DepartureKey) =>
  compareCode(a.startTime, b.startTime) ||
  compareText(a.productTitle, b.productTitle) ||
  compareText(a.rateTitle, b.rateTitle) ||
  compareCode(a.timezone, b.timezone) ||
  compareCode(a.accountId, b.accountId) ||
  compareCode(a.productId, b.productId) ||
  compareCode(a.rateId, b.rateId)

export const compareRows = (a: ManifestRow, b: ManifestRow) =>
  compareText(a.guest.name, b.guest.name) || compareCode(a.reference, b.reference) || compareCode(a.id, b.id)

const keyOf = (d: DepartureKey) => JSON.stringify([d.accountId, d.productId, d.rateId, d.startTime, d.timezone])

/** Groups the day's rows into departures with their counts, lists cancelled rows apart, adds the totals. */
export const buildManifest = (day: ManifestDay, entries: ReadonlyArray<ManifestEntry>): Manifest => {
  const groups = new Map<string, Array<ManifestEntry>>()
  const cancelled: Array<ManifestEntry> = []
  for (const entry of entries) {
    if (!isLive(entry.row)) {
      cancelled.push(entry)
      continue
    }
    const k = keyOf(entry.departure)
    const group = groups.get(k)
    if (group) group.push(entry)
    else groups.set(k, [entry])
  }

  const totals = { departures: groups.size, bookings: 0, passengers: 0, checked_in: 0, no_show: 0 }
  const departures = [...groups.values()]
    // Titles are taken from the group's first row, so they do not depend on the order rows arrive in.
    .map((group) => group.sort((a, b) => compareRows(a.row, b.row)))
    .sort((a, b) => compareDepartures(a[0]!.departure, b[0]!.departure))
    .map((group): Departure => {
      const key = group[0]!.departure
      const rows = group.map((e) => e.row)
      let passengers = 0
      let checkedIn = 0
      let noShow = 0
      for (const row of rows) {
        passengers += row.participants
        checkedIn += checkedInOf(row)
        noShow += noShowOf(row)
      }
      totals.bookings += rows.length
      totals.passengers += passengers
      totals.checked_in += checkedIn
      totals.no_show += noShow
      return {
        start_time: key.startTime,
        timezone: key.timezone,
        product_title: key.productTitle,
        rate_title: key.rateTitle,
        passengers,
        checked_in: checkedIn,
        no_show: noShow,
        bookings: rows
      }
    })

  return {
    date: day.date,
    timezone: day.timezone,
    synced_at: day.synced_at,
    totals,
    departures,
    cancelled: cancelled
      .sort((a, b) => compareDepartures(a.departure, b.departure) || compareRows(a.row, b.row))
      .map((e) => e.row)
  }
}

/**
 * The stored pax breakdown (a JSON array of pricing-category lines written by the mirror) as the
 * API shows it: `{title, quantity}` items; anything that is not an array is null.
 */
export const paxBreakdownOf = (stored: unknown): ReadonlyArray<PaxLine> | null => {
  if (!Array.isArray(stored)) return null
  return stored.map((item: unknown): PaxLine => {
    const line: { readonly title?: unknown; readonly quantity?: unknown } = typeof item === "object" && item !== null
      ? item
      : {}
    return {
      title: typeof line.title === "string" ? line.title : "",
      quantity: typeof line.quantity === "number" && Number.isInteger(line.quantity) && line.quantity >= 0
        ? line.quantity
        : 0
    }
  })
}
