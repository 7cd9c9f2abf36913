/**
 * The daily manifest of the operators a request acts for, from the booking-system mirror: one read
 * (ManifestRepo) grouped into departures with their counts by the domain rules
 * (src/partner/manifest/rules.ts).
 */
import { Effect } from "effect"
import { toIsoOrNull } from "../../domain/dates.js"
import { annotateSpan, spanFn } from "../../observability/spanFn.js"
import type { AuthenticatedKey } from "../auth/KeyAuth.js"
import { operatorIdsFor } from "../auth/visibility.js"
import type { ManifestParams } from "./Api.js"
import { ManifestRepo, type ManifestRequest, type ManifestRowRecord } from "./ManifestRepo.js"
import { buildManifest, type ManifestEntry, paxBreakdownOf } from "./rules.js"
import type { Manifest as ManifestBody } from "./schemas.js"

export type { ManifestRequest, ManifestRowRecord } from "./ManifestRepo.js"

/** A manifest row as the grouping reads it (pure: the benchmark's floor maps its rows with it too). */
export const toEntry = (r: ManifestRowRecord, includeContact: boolean): ManifestEntry => ({
  departure: {
    startTime: r.start_time,
    timezone: r.timezone,
    productTitle: r.product_title,
    rateTitle: r.rate_title,
    accountId: r.account_id,
    productId: r.product_id,
    rateId: r.rate_id
  },
  row: {
    id: r.id!,
    reference: r.reference,
    confirmation_code: r.confirmation_code,
    status: r.status,
    partner: { id: r.operator_id, name: r.operator_name },
    channel: { class: r.channel_class, source: r.channel_source, title: r.channel_title },
    participants: r.participants,
    pax_breakdown: paxBreakdownOf(r.pax_breakdown),
    guest: includeContact
      ? { name: r.guest_name, email: r.guest_email, phone: r.guest_phone }
      : { name: r.guest_name },
    pickup: r.pickup_place === null && r.pickup_time === null ? null : { place: r.pickup_place, time: r.pickup_time },
    payment_status: r.payment_status,
    check_in: { status: r.check_in_status, present: r.check_in_present }
  }
})

export class Manifest extends Effect.Service<Manifest>()("Partner/Manifest", {
  effect: Effect.gen(function*() {
    const repo = yield* ManifestRepo

    const day = spanFn("Manifest.day")(function*(r: ManifestRequest) {
      yield* annotateSpan({ date: r.date, operators: r.operatorIds.length })
      const rows = yield* repo.day(r)
      const first = rows[0]
      if (first === undefined) return yield* Effect.dieMessage("operator of the key not found")
      const entries: Array<ManifestEntry> = []
      for (const row of rows) if (row.id !== null) entries.push(toEntry(row, r.includeContact))
      return buildManifest(
        { date: r.date, timezone: first.day_timezone, synced_at: toIsoOrNull(first.day_synced_at) },
        entries
      ) satisfies ManifestBody
    })

    /** GET /manifest for a key (the REST handler and the assistant's `get_manifest`): the operators in view, the day. */
    const forKey = spanFn("Manifest.forKey")(function*(key: AuthenticatedKey, p: typeof ManifestParams.Type) {
      const operatorIds = yield* operatorIdsFor(key, p.partner_id)
      return yield* day({ date: p.date, operatorIds, includeContact: key.scopes.includes("guests.contact:read") })
    })

    return { day, forKey } as const
  }),
  dependencies: [ManifestRepo.Default]
}) {}
