import { Schema } from "effect"

/** Scopes a secret key can hold (spec §5). Write scopes are off on a new key unless picked. */
export const SCOPES = [
  "bookings:read",
  "manifest:read",
  "guests.contact:read",
  "finance:read",
  "analytics:read",
  "tours:read",
  "checkins:write",
  "payment_links:write",
  "bookings.cancel:write",
  "bookings.reschedule:write"
] as const

export const Scope = Schema.Literal(...SCOPES)
export type Scope = typeof Scope.Type

export const isScope = Schema.is(Scope)
