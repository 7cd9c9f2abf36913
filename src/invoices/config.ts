import { Config } from "effect"
import { cronSetting } from "../lib/settings.js"

/**
 * Commission invoices and credit notes (src/invoices/, docs/api/invoices.md): the seller (the
 * marketplace) as printed on every document, stored with each document at issue, and the
 * commission-close job's schedule.
 */
export const InvoiceConfig = Config.all({
  sellerName: Config.string("INVOICE_SELLER_NAME").pipe(Config.withDefault("Tour Partner AS")),
  /** The seller's organisation number (9 digits); printed as `NO 999 999 999 MVA`. */
  sellerOrgNumber: Config.string("INVOICE_SELLER_ORG_NUMBER").pipe(
    Config.withDefault("999999999"),
    Config.validate({ message: "must be 9 digits", validation: (s) => /^\d{9}$/.test(s.replaceAll(" ", "")) }),
    Config.map((s) => s.replaceAll(" ", ""))
  ),
  /** The seller's postal address, one line (commas separate the printed lines). */
  sellerAddress: Config.string("INVOICE_SELLER_ADDRESS").pipe(
    Config.withDefault("Karl Johans gate 1, 0154 Oslo, Norway")
  ),
  sellerEmail: Config.option(Config.string("INVOICE_SELLER_EMAIL")),
  /** The account an amount still payable is paid to. */
  sellerBankAccount: Config.option(Config.string("INVOICE_SELLER_BANK_ACCOUNT")),
  /** VAT (MVA) on the marketplace's commission, percent. */
  vatPercent: Config.number("INVOICE_VAT_PERCENT").pipe(
    Config.withDefault(25),
    Config.validate({ message: "must be between 0 and 100", validation: (n) => n >= 0 && n <= 100 })
  ),
  /** Days from the issue date to the due date. */
  dueDays: Config.integer("INVOICE_DUE_DAYS").pipe(
    Config.withDefault(14),
    Config.validate({ message: "must be at least 0", validation: (n) => n >= 0 })
  ),
  /** When the commission-close job issues the previous month's documents (UTC; default the 2nd at 03:00). */
  closeCron: cronSetting("COMMISSION_CLOSE_CRON", "0 3 2 * *")
})

export type InvoiceConfig = Config.Config.Success<typeof InvoiceConfig>
