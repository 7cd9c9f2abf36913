/**
 * The sandbox's payment provider: its data in PostgreSQL (schema surfboard_sandbox) and the rules
 * Surfboard applies to money, as the API handlers (api.ts), the hosted pay page (payPage.ts) and the
 * test helpers (sandbox.ts) use them. One module per thing it keeps:
 *
 * - accounts.ts: partners, their merchants and the merchants' terminals.
 * - orders.ts: a purchase is paid when a card is presented (`pay`) or its hosted page is paid; a
 *   return (refund) is a negative order linked to a paid purchase, never for more than is left to
 *   refund (pending refunds count). Voids: a completed purchase payment, before 23:00 UTC of its
 *   UTC day, with no refund on it.
 * - settlement.ts: refunds and voids settle per the switches: at once, after a delay, or when told
 *   (`settleNow`). Settlement is applied lazily, before every read and write (`settleDue`), in
 *   sandbox time.
 * - idempotency.ts: keyed calls (`keyed`): the same Idempotency-Key with the same request answers the
 *   stored answer; with another request 422. The check, the change and the stored answer are one
 *   transaction.
 * - rows.ts: the rows, their ids, and the INSERTs of an order, its payments and their transactions.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { makeAccounts } from "./accounts.js"
import type { SandboxClock } from "./clock.js"
import { makeKeyed } from "./idempotency.js"
import { makeMerchantInitiated } from "./merchantInitiated.js"
import { makeOrders, type SwitchesFor } from "./orders.js"
import { makeSettlement } from "./settlement.js"

export const makeStore = (clock: SandboxClock, switchesFor: SwitchesFor) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* makeAccounts(clock)
    const settlement = yield* makeSettlement(clock)
    const keyed = yield* makeKeyed(clock)
    const merchantInitiated = yield* makeMerchantInitiated(clock, switchesFor)
    const orders = yield* makeOrders(clock, switchesFor, accounts, settlement, merchantInitiated.tokenise)
    return {
      sql,
      now: clock.now,
      createPartner: accounts.createPartner,
      createMerchant: accounts.createMerchant,
      partnerById: accounts.partnerById,
      partnerByKey: accounts.partnerByKey,
      merchantById: accounts.merchantById,
      terminalsOf: accounts.terminalsOf,
      orderView: orders.orderView,
      pageOrder: orders.pageOrder,
      refundsOf: orders.refundsOf,
      settleDue: settlement.settleDue,
      settleNow: settlement.settleNow,
      keyed,
      createOrder: orders.createOrder,
      pay: orders.pay,
      voidPayment: orders.voidPayment,
      cancelPayment: orders.cancelPayment,
      cancelOrder: orders.cancelOrder,
      terminalOf: accounts.terminalOf,
      merchantInitiated
    }
  })

export type Store = Effect.Effect.Success<ReturnType<typeof makeStore>>
