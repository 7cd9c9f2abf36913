/**
 * Every tool of the assistant-facing MCP server, in the order `tools/list` shows them, and the layer
 * of the services they use (the server provides it once).
 */
import { Layer } from "effect"
import { BookingSystemAccounts } from "../../operators/BookingSystemAccounts.js"
import { Analytics } from "../../partner/analytics/Analytics.js"
import { Bookings } from "../../partner/bookings/Bookings.js"
import { Cancels } from "../../partner/cancels/Cancels.js"
import { Checkins } from "../../partner/checkins/Checkins.js"
import { Manifest } from "../../partner/manifest/Manifest.js"
import { PaymentLinks } from "../../partner/paymentLinks/PaymentLinks.js"
import { RescheduleOptions } from "../../partner/reschedules/RescheduleOptions.js"
import { Reschedules } from "../../partner/reschedules/Reschedules.js"
import { Sales } from "../../partner/sales/Sales.js"
import { Confirmations } from "../confirmations/Confirmations.js"
import { meTool } from "./me.js"
import {
  getBooking,
  getManifest,
  getRescheduleOptions,
  getSales,
  getSiteAnalytics,
  getTourAnalytics,
  listBookings
} from "./reads.js"
import type { AssistantTool } from "./tool.js"
import { cancelBooking, checkInGuests, rescheduleBooking, sendBalancePaymentLink } from "./writes.js"

/** The services the tools need (the union of their requirements besides CurrentKey/AssistantConnection). */
export type AssistantToolServices =
  | Bookings
  | Manifest
  | Sales
  | Analytics
  | RescheduleOptions
  | Checkins
  | Cancels
  | Reschedules
  | PaymentLinks
  | Confirmations

/**
 * The tools' services: the REST features' own use cases (the same layers the REST groups provide
 * themselves) and the confirmations. What these need (database, booking system, payment provider,
 * outbox, settings) is what the partner API needs: the app provides it.
 */
export const AssistantToolsLive = Layer.mergeAll(
  Bookings.Default,
  Manifest.Default,
  Sales.Default,
  Analytics.Default,
  RescheduleOptions.Default,
  Checkins.Default,
  Cancels.Default,
  Reschedules.Default,
  PaymentLinks.Default.pipe(Layer.provide(BookingSystemAccounts.Default)),
  Confirmations.Default
)

export const assistantTools: ReadonlyArray<AssistantTool> = [
  meTool,
  listBookings,
  getBooking,
  getManifest,
  getSales,
  getTourAnalytics,
  getSiteAnalytics,
  getRescheduleOptions,
  checkInGuests,
  sendBalancePaymentLink,
  cancelBooking,
  rescheduleBooking
]
