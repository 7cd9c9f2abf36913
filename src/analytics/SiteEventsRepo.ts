/**
 * The SQL of collected events and their salts (migration 0025): batched inserts into the monthly
 * partitions of `site_events`, the partitions themselves, and `site_salts`. A database error or a
 * row that does not decode is a defect here, once.
 *
 * DDL takes no bind parameters, so the partition statements are built with `sql.unsafe` from a name
 * and bounds that this module makes itself from a Date (`partitionName`, ISO timestamps), never from
 * anything a client sent.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { repoEdge, transactionAtEdge } from "../db/repoEdge.js"
import { addMonths, partitionMonth, partitionName, type SiteEvent } from "./events.js"

const Salt = Schema.Struct({ salt: Schema.Uint8ArrayFromSelf })

export class SiteEventsRepo extends Effect.Service<SiteEventsRepo>()("Analytics/SiteEventsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = transactionAtEdge(sql)

    /** One INSERT of the whole batch (arrays unnested: a fixed number of parameters whatever its size). */
    const insertRows = (events: ReadonlyArray<SiteEvent>) => {
      const col = <A>(f: (e: SiteEvent) => A) => events.map(f)
      return sql`
        INSERT INTO site_events (at, site_id, kind, visitor, new_visitor, tour_id, path, referrer_host, channel,
          utm_source, utm_medium, utm_campaign, country, device, browser, os, booking_code)
        SELECT * FROM unnest(
          ${col((e) => e.at.toISOString())}::timestamptz[], ${col((e) => e.siteId)}::uuid[],
          ${col((e) => e.kind)}::text[], ${col((e) => e.visitor)}::text[], ${col((e) => e.newVisitor)}::boolean[],
          ${col((e) => e.tourId)}::uuid[], ${col((e) => e.path)}::text[], ${col((e) => e.referrerHost)}::text[],
          ${col((e) => e.channel)}::text[], ${col((e) => e.utmSource)}::text[], ${col((e) => e.utmMedium)}::text[],
          ${col((e) => e.utmCampaign)}::text[], ${col((e) => e.country)}::text[], ${col((e) => e.device)}::text[],
          ${col((e) => e.browser)}::text[], ${col((e) => e.os)}::text[], ${col((e) => e.bookingCode)}::text[]
        )`
    }

    const createPartition = (month: Date) =>
      sql.unsafe(
        `CREATE TABLE IF NOT EXISTS ${partitionName(month)} PARTITION OF site_events ` +
          `FOR VALUES FROM ('${month.toISOString()}') TO ('${addMonths(month, 1).toISOString()}')`
      )

    const partitions = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ name: Schema.String }),
      execute: () =>
        sql`
          SELECT c.relname AS name FROM pg_inherits i
          JOIN pg_class c ON c.oid = i.inhrelid
          JOIN pg_class p ON p.oid = i.inhparent
          WHERE p.relname = 'site_events' AND p.relnamespace = current_schema()::regnamespace`
    })

    const insertSalt = SqlSchema.void({
      Request: Schema.Struct({ day: Schema.String, salt: Schema.Uint8ArrayFromSelf }),
      execute: ({ day, salt }) =>
        sql`INSERT INTO site_salts (day, salt) VALUES (${day}::date, ${salt}) ON CONFLICT (day) DO NOTHING`
    })

    const findSalt = SqlSchema.single({
      Request: Schema.String,
      Result: Salt,
      execute: (day) => sql`SELECT salt FROM site_salts WHERE day = ${day}::date`
    })

    const toursOf = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ tour_id: Schema.String }),
      execute: (siteId) => sql`SELECT tour_id FROM site_tours WHERE site_id = ${siteId}`
    })

    return repoEdge("SiteEventsRepo", {
      /** The tours the site sells (`site_tours`). */
      toursOf: (siteId: string) => Effect.map(toursOf(siteId), (rows) => new Set(rows.map((r) => r.tour_id))),
      /** Writes the batch in one transaction, making the months' partitions first when missing. */
      insertBatch: (events: ReadonlyArray<SiteEvent>, months: ReadonlyArray<Date>) =>
        transaction(Effect.gen(function*() {
          for (const month of months) yield* createPartition(month)
          yield* insertRows(events)
        })),
      /** Makes the partition of the month starting at `month` when it does not exist. */
      createPartition,
      /** The months that have a partition. */
      partitionMonths: () => Effect.map(partitions(), (rows) => rows.flatMap((r) => partitionMonth(r.name) ?? [])),
      /** Drops the partition of the month starting at `month` (its events with it). */
      dropPartition: (month: Date) => sql.unsafe(`DROP TABLE IF EXISTS ${partitionName(month)}`),
      /** The salt of a UTC day: `salt` stored unless the day has one already (another instance's); the stored one. */
      saltOf: (day: string, salt: Uint8Array) =>
        Effect.zipRight(insertSalt({ day, salt }), Effect.map(findSalt(day), (row) => row.salt)),
      /** Deletes the salts of days before `day`. */
      deleteSaltsBefore: (day: string) =>
        SqlSchema.findAll({
          Request: Schema.String,
          Result: Schema.Struct({ day: Schema.String }),
          execute: (d) => sql`DELETE FROM site_salts WHERE day < ${d}::date RETURNING day::text AS day`
        })(day).pipe(Effect.map((rows) => rows.length))
    })
  })
}) {}
