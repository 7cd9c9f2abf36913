/**
 * The OpenAPI examples of quickbook error bodies (docs only): for an answer, one example per error
 * code its description names (`sold_out` …), with the clerk message the service sends in English.
 */
import { CLERK_MESSAGES } from "./clerkMessages.js"
import { QuickbookCode } from "./errors.js"

const CODES = new Set<string>(QuickbookCode.literals)

/** A sale reference as the service issues them (the one the quickbook examples follow). */
export const EXAMPLE_SALE_REFERENCE = "SVC-7H3K9M2Q4R"

/** Codes whose failure concerns one sale: the body names it. */
const ABOUT_A_SALE = new Set<QuickbookCode>([
  "payment_mismatch",
  "duplicate_payment",
  "payment_not_found",
  "hold_expired",
  "provider_refused",
  "price_changed"
])

/** The media type `examples` of an error answer whose description names its codes in backticks. */
export const errorExamples = (description: string) =>
  Object.fromEntries(
    [...new Set([...description.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!))]
      .filter((code): code is QuickbookCode => CODES.has(code))
      .map((code) => [code, {
        summary: code,
        value: {
          error: {
            code,
            clerkMessage: CLERK_MESSAGES[code].en,
            ...(ABOUT_A_SALE.has(code) ? { reference: EXAMPLE_SALE_REFERENCE } : {})
          }
        }
      }])
  )
