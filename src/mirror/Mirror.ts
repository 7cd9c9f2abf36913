/**
 * The mirror of the operators' booking systems that the manifest reads. A refresh reads every
 * booking line with a departure in a window of days from the booking system (all sales channels),
 * upserts them, turns lines that disappeared into CANCELLED and records when each day was synced.
 *
 * - Accounts shared by several operators are read once; each line belongs to the operator whose
 *   tour is the line's product, else to the account's first operator by name.
 * - One account failing never stops the others; each account's result is a `mirror_runs` row.
 * - Everything an account's refresh writes is one transaction: a half-applied refresh never shows.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect, Schedule } from "effect"
import { MirrorConfig } from "../config.js"
import { isTimeZone, mirrorWindow } from "../domain/localDay.js"
import { BookingSystem, type BookingLine, type BookingSystemError } from "../ports/BookingSystem.js"
import { BookingSystemAccounts, type MirroredAccount } from "../operators/BookingSystemAccounts.js"

export type RefreshKind = "near_term" | "nightly" | "manual"

export interface AccountCounts {
  readonly linesSeen: number
  readonly inserted: number
  readonly updated: number
  readonly cancelled: number
}

export interface AccountResult extends Partial<AccountCounts> {
  readonly accountId: string
  readonly account: string
  readonly from: string
  readonly to: string
  readonly ok: boolean
  readonly error?: string
}

export interface RefreshSummary {
  readonly kind: RefreshKind
  readonly accounts: number
  readonly ok: number
  readonly failed: number
  readonly linesSeen: number
  readonly inserted: number
  readonly updated: number
  readonly cancelled: number
  readonly results: ReadonlyArray<AccountResult>
}

/** Upserts are sent in chunks of this many lines (one JSON parameter each). */
const CHUNK = 5000

const describe = (e: BookingSystemError) => `${e._tag} (${e.reason}) in ${e.operation}: ${e.detail}`

/** A line as the upsert statement reads it (jsonb_to_recordset column names). */
const toRecord = (l: BookingLine) => ({
  line_id: l.lineId,
  booking_id: l.bookingId,
  reference: l.bookingReference,
  external_reference: l.externalReference,
  status: l.status,
  product_id: l.productId,
  product_title: l.productTitle,
  rate_id: l.rateId,
  rate_title: l.rateTitle,
  start_time_id: l.startTimeId,
  departure_date: l.date,
  start_time: l.startTime,
  participants: l.participants,
  pax_breakdown: l.pax.length === 0 ? null : l.pax.map((p) => ({ title: p.title, quantity: p.quantity })),
  channel_class: l.channel.class,
  channel_source: l.channel.source,
  channel_title: l.channel.title,
  guest_name: l.guest.name,
  guest_email: l.guest.email,
  guest_phone: l.guest.phone,
  pickup_place: l.pickup?.place ?? null,
  pickup_time: l.pickup?.time ?? null,
  payment_status: l.paymentStatus,
  total_minor: l.totalMinor,
  currency: l.currency,
  booked_at: l.createdAt.toISOString(),
  source_updated_at: l.updatedAt?.toISOString() ?? null
})

export class Mirror extends Effect.Service<Mirror>()("Mirror/Mirror", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const bookingSystem = yield* BookingSystem
    const accounts = yield* BookingSystemAccounts
    const config = yield* MirrorConfig

    const retryPolicy = Schedule.exponential(Duration.millis(config.retryBaseMillis)).pipe(
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(config.retries))
    )

    /** Upserts one chunk; returns how many lines were new and how many changed. */
    const upsert = (m: MirroredAccount, lines: ReadonlyArray<BookingLine>) =>
      sql<{ inserted: boolean; cancelled: boolean }>`
        WITH input AS (
          SELECT * FROM jsonb_to_recordset(${JSON.stringify(lines.map(toRecord))}::jsonb) AS x(
            line_id text, booking_id text, reference text, external_reference text, status text,
            product_id text, product_title text, rate_id text, rate_title text, start_time_id text,
            departure_date date, start_time text, participants integer, pax_breakdown jsonb,
            channel_class text, channel_source text, channel_title text,
            guest_name text, guest_email text, guest_phone text, pickup_place text, pickup_time text,
            payment_status text, total_minor bigint, currency text, booked_at timestamptz, source_updated_at timestamptz)
        ),
        linked AS (
          SELECT unnest(${`{${m.operators.map((o) => o.id).join(",")}}`}::uuid[]) AS id
        )
        INSERT INTO manifest_rows AS r (
          account_id, line_id, booking_id, reference, external_reference, operator_id, tour_id, service_booking_id,
          status, product_id, product_title, rate_id, rate_title, start_time_id, departure_date, start_time, timezone,
          participants, pax_breakdown, channel_class, channel_source, channel_title, guest_name, guest_email,
          guest_phone, pickup_place, pickup_time, payment_status, total_minor, currency, booked_at, source_updated_at,
          cancelled_at
        )
        SELECT ${m.account.id}::uuid, i.line_id, i.booking_id, i.reference, i.external_reference, o.id, t.id, b.id,
          i.status, i.product_id, i.product_title, i.rate_id, i.rate_title, i.start_time_id, i.departure_date,
          i.start_time, o.timezone, i.participants, i.pax_breakdown, i.channel_class, i.channel_source,
          i.channel_title, i.guest_name, i.guest_email, i.guest_phone, i.pickup_place, i.pickup_time,
          i.payment_status, i.total_minor, i.currency, i.booked_at, i.source_updated_at,
          CASE WHEN i.status = 'CANCELLED' THEN now() END
        FROM input i
        LEFT JOIN LATERAL (
          SELECT t.id, t.operator_id FROM tours t
          WHERE t.booking_system_product_id = i.product_id AND t.operator_id IN (SELECT id FROM linked)
          ORDER BY t.created_at, t.id LIMIT 1
        ) t ON true
        JOIN operators o ON o.id = coalesce(t.operator_id, ${m.operators[0]!.id}::uuid)
        LEFT JOIN bookings b
          ON b.confirmation_code = i.external_reference AND b.operator_id IN (SELECT id FROM linked)
        ON CONFLICT (account_id, line_id) DO UPDATE SET
          booking_id = excluded.booking_id, reference = excluded.reference,
          external_reference = excluded.external_reference, operator_id = excluded.operator_id,
          tour_id = excluded.tour_id, service_booking_id = excluded.service_booking_id, status = excluded.status,
          product_id = excluded.product_id, product_title = excluded.product_title, rate_id = excluded.rate_id,
          rate_title = excluded.rate_title, start_time_id = excluded.start_time_id,
          departure_date = excluded.departure_date, start_time = excluded.start_time, timezone = excluded.timezone,
          participants = excluded.participants, pax_breakdown = excluded.pax_breakdown,
          channel_class = excluded.channel_class, channel_source = excluded.channel_source,
          channel_title = excluded.channel_title, guest_name = excluded.guest_name,
          guest_email = excluded.guest_email, guest_phone = excluded.guest_phone,
          pickup_place = excluded.pickup_place, pickup_time = excluded.pickup_time,
          payment_status = excluded.payment_status, total_minor = excluded.total_minor,
          currency = excluded.currency, booked_at = excluded.booked_at,
          source_updated_at = excluded.source_updated_at,
          cancelled_at = CASE WHEN excluded.status = 'CANCELLED' THEN coalesce(r.cancelled_at, now()) END,
          synced_at = now()
        WHERE (r.booking_id, r.reference, r.external_reference, r.operator_id, r.tour_id, r.service_booking_id,
            r.status, r.product_id, r.product_title, r.rate_id, r.rate_title, r.start_time_id, r.departure_date,
            r.start_time, r.timezone, r.participants, r.pax_breakdown, r.channel_class, r.channel_source,
            r.channel_title, r.guest_name, r.guest_email, r.guest_phone, r.pickup_place, r.pickup_time,
            r.payment_status, r.total_minor, r.currency, r.booked_at, r.source_updated_at)
          IS DISTINCT FROM
          (excluded.booking_id, excluded.reference, excluded.external_reference, excluded.operator_id,
            excluded.tour_id, excluded.service_booking_id, excluded.status, excluded.product_id,
            excluded.product_title, excluded.rate_id, excluded.rate_title, excluded.start_time_id,
            excluded.departure_date, excluded.start_time, excluded.timezone, excluded.participants,
            excluded.pax_breakdown, excluded.channel_class, excluded.channel_source, excluded.channel_title,
            excluded.guest_name, excluded.guest_email, excluded.guest_phone, excluded.pickup_place,
            excluded.pickup_time, excluded.payment_status, excluded.total_minor, excluded.currency,
            excluded.booked_at, excluded.source_updated_at)
        RETURNING (xmax = 0) AS inserted, (xmax <> 0 AND r.status = 'CANCELLED' AND r.cancelled_at = now()) AS cancelled`.pipe(
        Effect.map((rows) => {
          const inserted = rows.filter((r) => r.inserted).length
          // A line the booking system now reports cancelled counts as cancelled, not as changed.
          const cancelled = rows.filter((r) => r.cancelled).length
          return { inserted, updated: rows.length - inserted - cancelled, cancelled }
        })
      )

    /** Lines of the window the booking system no longer lists, with their booking's reference. */
    const missingLines = (m: MirroredAccount, window: { from: string; to: string }, seen: ReadonlyArray<string>) =>
      sql<{ line_id: string; reference: string | null; booking_id: string }>`
        SELECT line_id, reference, booking_id FROM manifest_rows
        WHERE account_id = ${m.account.id}
          AND departure_date BETWEEN ${window.from}::date AND ${window.to}::date
          AND status <> 'CANCELLED'
          AND line_id NOT IN (SELECT jsonb_array_elements_text(${JSON.stringify(seen)}::jsonb))`

    /**
     * A line can leave the window because it was cancelled or deleted, or because it moved to a day
     * outside the window. Each such booking is read once: lines still there are updated where they
     * are now; lines the booking system no longer has (or has cancelled) become CANCELLED. When the
     * booking system does not answer for one, its lines are left as they are until the next run.
     */
    const settleMissing = (m: MirroredAccount, missing: ReadonlyArray<{ line_id: string; reference: string | null; booking_id: string }>) =>
      Effect.gen(function*() {
        const byBooking = new Map<string, Array<string>>()
        for (const row of missing) {
          const ref = row.reference ?? row.booking_id
          byBooking.set(ref, [...(byBooking.get(ref) ?? []), row.line_id])
        }
        const found: Array<BookingLine> = []
        const gone: Array<string> = []
        yield* Effect.forEach(byBooking, ([ref, lineIds]) =>
          bookingSystem.booking(m.account, ref).pipe(
            Effect.map((lines) => {
              for (const id of lineIds) {
                const line = lines.find((l) => l.lineId === id)
                if (line && line.status !== "CANCELLED") found.push(line)
                else gone.push(id)
              }
            }),
            Effect.catchAll((e) => e._tag === "BookingSystemRejected" && e.reason === "not_found" ? Effect.sync(() => gone.push(...lineIds)) : Effect.void)
          ), { concurrency: 4, discard: true })
        return { found, gone }
      })

    const cancelLines = (m: MirroredAccount, lineIds: ReadonlyArray<string>) =>
      lineIds.length === 0 ? Effect.succeed(0) : sql<{ id: string }>`
        UPDATE manifest_rows SET status = 'CANCELLED', cancelled_at = now(), synced_at = now()
        WHERE account_id = ${m.account.id} AND status <> 'CANCELLED'
          AND line_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(lineIds)}::jsonb))
        RETURNING id`.pipe(Effect.map((rows) => rows.length))

    const markSynced = (m: MirroredAccount, window: { from: string; to: string }) =>
      sql`
        INSERT INTO mirror_days (account_id, departure_date, synced_at)
        SELECT ${m.account.id}, d::date, now()
        FROM generate_series(${window.from}::date, ${window.to}::date, interval '1 day') AS d
        ON CONFLICT (account_id, departure_date) DO UPDATE SET synced_at = excluded.synced_at`

    /** Writes everything one refresh of one account found, in one transaction. */
    const apply = (
      m: MirroredAccount,
      window: { from: string; to: string },
      lines: ReadonlyArray<BookingLine>,
      settled: { found: ReadonlyArray<BookingLine>; gone: ReadonlyArray<string> }
    ) =>
      Effect.gen(function*() {
        const all = [...lines, ...settled.found]
        let inserted = 0
        let updated = 0
        let cancelled = 0
        for (let i = 0; i < all.length; i += CHUNK) {
          const counts = yield* upsert(m, all.slice(i, i + CHUNK))
          inserted += counts.inserted
          updated += counts.updated
          cancelled += counts.cancelled
        }
        cancelled += yield* cancelLines(m, settled.gone)
        yield* markSynced(m, window)
        return { linesSeen: lines.length, inserted, updated, cancelled } satisfies AccountCounts
      }).pipe(sql.withTransaction)

    const startRun = (m: MirroredAccount, kind: RefreshKind, window: { from: string; to: string }, jobRunId: string | null) =>
      sql<{ id: string }>`
        INSERT INTO mirror_runs (account_id, job_run_id, kind, date_from, date_to, started_at, outcome)
        VALUES (${m.account.id}, ${jobRunId}, ${kind}, ${window.from}, ${window.to}, now(), 'running')
        RETURNING id`.pipe(Effect.map((r) => r[0]!.id), Effect.orDie)

    const finishRun = (runId: string, outcome: "ok" | "failed", counts: Partial<AccountCounts>, error: string | null) =>
      sql`
        UPDATE mirror_runs SET finished_at = now(), outcome = ${outcome}, lines_seen = ${counts.linesSeen ?? 0},
          inserted = ${counts.inserted ?? 0}, updated = ${counts.updated ?? 0}, cancelled = ${counts.cancelled ?? 0},
          error = ${error}
        WHERE id = ${runId}`.pipe(Effect.orDie, Effect.asVoid)

    const failRun = (m: MirroredAccount, runId: string, window: { from: string; to: string }, error: string) =>
      Effect.gen(function*() {
        yield* finishRun(runId, "failed", {}, error)
        yield* Effect.logWarning(`mirror: account ${m.account.name} failed`).pipe(
          Effect.annotateLogs({ account_id: m.account.id, error })
        )
        return { accountId: m.account.id, account: m.account.name, ...window, ok: false, error } satisfies AccountResult
      })

    /**
     * The account's window in its operators' zones. An operator whose zone is not one (operators'
     * zones are free text) fails its account alone: the run is recorded over the UTC window.
     */
    const refreshInZones = (m: MirroredAccount, now: Date, daysAhead: number, kind: RefreshKind, jobRunId: string | null) =>
      Effect.suspend(() => {
        const unknown = m.operators.filter((o) => !isTimeZone(o.timezone))
        if (unknown.length === 0) {
          return refreshAccount(m, mirrorWindow(m.operators.map((o) => o.timezone), now, daysAhead), kind, jobRunId)
        }
        const window = mirrorWindow(["UTC"], now, daysAhead)
        const error = `unknown time zone: ${unknown.map((o) => `${o.timezone} (operator ${o.name})`).join(", ")}`
        return Effect.flatMap(startRun(m, kind, window, jobRunId), (runId) => failRun(m, runId, window, error))
      })

    /** Refreshes one account over `window`; never fails: the result says what happened. */
    const refreshAccount = Effect.fn("Mirror.refreshAccount")(function*(
      m: MirroredAccount,
      window: { from: string; to: string },
      kind: RefreshKind,
      jobRunId: string | null = null
    ) {
      yield* Effect.annotateCurrentSpan({ account_id: m.account.id, kind, from: window.from, to: window.to })
      const runId = yield* startRun(m, kind, window, jobRunId)
      const base = { accountId: m.account.id, account: m.account.name, from: window.from, to: window.to }
      const lines = yield* bookingSystem.bookingLines(m.account, window).pipe(
        // A definite refusal (bad credentials, ...) will not change by asking again.
        Effect.retry({ schedule: retryPolicy, while: (e) => e._tag === "BookingSystemUnavailable" }),
        Effect.either
      )
      if (lines._tag === "Left") return yield* failRun(m, runId, window, describe(lines.left))
      // A line outside the window asked for is not judged here (the booking system answered loosely).
      const inWindow = lines.right.filter((l) => l.date >= window.from && l.date <= window.to)
      const stored = yield* Effect.gen(function*() {
        const missing = yield* missingLines(m, window, inWindow.map((l) => l.lineId))
        const settled = yield* settleMissing(m, missing)
        return yield* apply(m, window, inWindow, settled)
      }).pipe(Effect.either)
      // The database refusing what the booking system sent (e.g. a NUL in a guest name) fails this
      // account alone; nothing of it was stored (one transaction).
      if (stored._tag === "Left") {
        yield* Effect.logError(`mirror: could not store account ${m.account.name}`, stored.left)
        return yield* failRun(m, runId, window, `could not store the lines: ${stored.left.message}`)
      }
      const counts = stored.right
      yield* finishRun(runId, "ok", counts, null)
      yield* Effect.annotateCurrentSpan({ ...counts })
      return { ...base, ok: true, ...counts } satisfies AccountResult
    })

    /**
     * Refreshes every account (or one) over today and the next `daysAhead` days in its operators'
     * time zones, `concurrency` accounts at a time.
     */
    const refresh = Effect.fn("Mirror.refresh")(function*(
      options: { kind: RefreshKind; daysAhead: number; accountId?: string; jobRunId?: string | null }
    ) {
      yield* Effect.annotateCurrentSpan({ kind: options.kind, days_ahead: options.daysAhead })
      const targets = options.accountId === undefined
        ? yield* accounts.mirrored()
        : [yield* accounts.byId(options.accountId).pipe(Effect.orDie)]
      const now = new Date(yield* Clock.currentTimeMillis)
      const results = yield* Effect.forEach(
        targets,
        (m) => refreshInZones(m, now, options.daysAhead, options.kind, options.jobRunId ?? null),
        { concurrency: config.concurrency }
      )
      const sum = (f: (r: AccountResult) => number | undefined) => results.reduce((n, r) => n + (f(r) ?? 0), 0)
      const summary: RefreshSummary = {
        kind: options.kind,
        accounts: results.length,
        ok: results.filter((r) => r.ok).length,
        failed: results.filter((r) => !r.ok).length,
        linesSeen: sum((r) => r.linesSeen),
        inserted: sum((r) => r.inserted),
        updated: sum((r) => r.updated),
        cancelled: sum((r) => r.cancelled),
        results
      }
      const { results: _, ...counts } = summary
      yield* Effect.annotateCurrentSpan(counts)
      yield* Effect.logInfo(
        `mirror ${summary.kind}: ${summary.ok}/${summary.accounts} accounts ok, ${summary.linesSeen} lines seen, ` +
          `${summary.inserted} new, ${summary.updated} changed, ${summary.cancelled} cancelled`
      ).pipe(Effect.annotateLogs(counts))
      return summary
    })

    return { refresh, refreshAccount } as const
  })
}) {}
