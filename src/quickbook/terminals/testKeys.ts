/**
 * Test keys sell only through sandboxes; live keys never do (spec quickbook-api-v1 §5, §9; issue 6
 * item 1; docs/decisions.md "Quickbook: test keys and sandbox accounts"). The accounts a desk sale
 * would touch are the tour's booking-system account and the selling operator's merchant at the
 * payment provider; each carries a `sandbox` flag (migration 0018). A merchant that does not exist
 * is no system touched: the quote refuses it on its own ("cannot charge").
 */
import { QbForbidden } from "../errors.js"
import type { QuickbookKeyMode } from "./key.js"

export interface SaleAccounts {
  /** The tour's booking-system account is a sandbox. */
  readonly bookingSystemSandbox: boolean
  /** The selling operator's merchant is a sandbox merchant; null: the operator has no merchant. */
  readonly merchantSandbox: boolean | null
}

/** Whether a key of `mode` may use an account whose sandbox flag is `sandbox`. */
export const modeMayUse = (mode: QuickbookKeyMode, sandbox: boolean) => sandbox === (mode === "test")

/** Why a key of `mode` may not sell through these accounts, or null when it may. */
export const sandboxMismatch = (mode: QuickbookKeyMode, accounts: SaleAccounts): string | null => {
  const wrong = [
    modeMayUse(mode, accounts.bookingSystemSandbox) ? null : "the tour's booking-system account",
    accounts.merchantSandbox === null || modeMayUse(mode, accounts.merchantSandbox) ? null : "the operator's merchant"
  ].filter((x) => x !== null)
  if (wrong.length === 0) return null
  return mode === "test"
    ? `a test key sells only through sandbox accounts; ${wrong.join(" and ")} ${wrong.length > 1 ? "are" : "is"} live`
    : `a live key never sells through sandbox accounts; ${wrong.join(" and ")} ${
      wrong.length > 1 ? "are sandboxes" : "is a sandbox"
    }`
}

/**
 * Test and live never cross (issue 11 item 8): a sale is used at every later step (reserve, release,
 * book, status, ticket) only with a key of the mode it was quoted with (`quickbook_sales.key_id` →
 * `quickbook_keys.mode`, fixed for the key's life), whatever the accounts' flags say now. The sale
 * belongs to the terminal, so the refusal is 403 `tour_not_sellable_here` (in every step's list of
 * the spec), with a clerk message saying which kind of sale it is; undefined when the modes match.
 */
export const otherModeSale = (
  callerMode: QuickbookKeyMode,
  sale: { readonly reference: string; readonly keyMode: QuickbookKeyMode }
): QbForbidden | undefined =>
  callerMode === sale.keyMode ? undefined : new QbForbidden({
    code: "tour_not_sellable_here",
    detail: `sale ${sale.reference} was quoted with a ${sale.keyMode} key; a ${callerMode} key may not use it`,
    reference: sale.reference,
    variant: sale.keyMode === "test" ? "test_sale" : "live_sale"
  })
