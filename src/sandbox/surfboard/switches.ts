/**
 * The Surfboard sandbox's switches: the shared transport faults (../faults.ts) plus what a payment
 * provider can do to money, for every merchant or for one (keyed by the MERCHANT-ID a call carries;
 * a merchant's own settings win).
 *
 * - latencyMs, errorRate + errorStatus, hang, down: as in every sandbox (nothing is applied);
 * - loseAnswer: a call that changes something (POST, PUT, DELETE) is applied and committed, then its
 *   answer is lost: `hang` never answers, `drop` closes the connection. The caller cannot tell
 *   whether money moved; retrying with the same idempotency reference must not move it again;
 * - partialRefundRatio (0 < r < 1, or null): a refund returns only that share of what was asked
 *   (rounded down) and its order ends PARTIAL_PAYMENT_COMPLETED;
 * - settlement: `instant` (refunds and voids complete at once), `delayed` (they stay
 *   PAYMENT_PROCESSING / VOID_INITIATED for settlementDelayMs of sandbox time), `manual` (until
 *   `settle` is called).
 * - mitOutcome: how a saved card answers a merchant-initiated charge (merchantInitiated.ts): `paid`,
 *   `soft_decline`, `hard_decline` or `sca_required`.
 * - reportReads: the settlement report reads only (GET …/reports, …/charges; reports.ts): `ok`,
 *   `error` (503), `hang` (never answers) or `drop` (the connection is closed: a lost answer).
 */
import type { FaultSettings } from "../faults.js"
import { NO_FAULTS } from "../faults.js"
import type { MitOutcome } from "./merchantInitiated.js"

export interface SurfboardSwitches extends FaultSettings {
  readonly loseAnswer: "no" | "hang" | "drop"
  readonly partialRefundRatio: number | null
  readonly settlement: "instant" | "delayed" | "manual"
  readonly settlementDelayMs: number
  readonly mitOutcome: MitOutcome
  readonly reportReads: "ok" | "error" | "hang" | "drop"
}

export const NO_SWITCHES: SurfboardSwitches = {
  ...NO_FAULTS,
  loseAnswer: "no",
  partialRefundRatio: null,
  settlement: "instant",
  settlementDelayMs: 0,
  mitOutcome: "paid",
  reportReads: "ok"
}

/** How a refund or void that starts now settles under the switches. */
export const settlementPlan = (switches: SurfboardSwitches, now: Date) =>
  switches.settlement === "instant"
    ? { kind: "now" as const }
    : switches.settlement === "delayed"
    ? { kind: "at" as const, at: new Date(now.getTime() + switches.settlementDelayMs) }
    : { kind: "on_request" as const }
