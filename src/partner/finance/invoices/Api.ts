/**
 * The `invoices` group (GET /api/v1/finance/invoices: the commission invoices and credit notes of the
 * legal entities of the key's operators; spec §2 "Invoice and credit note", §4) and the `invoiceFiles`
 * group (their PDF and CSV by signed link, no key). Field names: docs/api/invoices.md.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { DateString, DateTimeString } from "../../../domain/dates.js"
import { InvalidRequest, NotFound } from "../../../domain/errors.js"
import { Cursor, oneOf, PartnerId } from "../../../http/params.js"
import { PartnerAuth, RequiredScope } from "../../auth/security.js"
import { Partner } from "../../bookings/booking.js"
import { financeLimit, financePage } from "../params.js"
import { DOCUMENT_TYPES, INVOICE_LIMIT_DEFAULT, IsoMonth, MAX_MONTHS } from "./rules.js"

export const InvoiceListParams = Schema.Struct({
  period_from: Schema.optional(IsoMonth).annotations({
    description: "First delivery month (YYYY-MM, UTC), inclusive."
  }),
  period_to: Schema.optional(IsoMonth).annotations({
    description: `Last delivery month (YYYY-MM), inclusive; not before \`period_from\`; with \`period_from\` at most ` +
      `${MAX_MONTHS} months counting both ends.`
  }),
  type: Schema.optional(oneOf(DOCUMENT_TYPES)).annotations({
    description: "`invoice` or `credit_note`; omit for both."
  }),
  limit: financeLimit(INVOICE_LIMIT_DEFAULT),
  cursor: Schema.optional(Cursor),
  partner_id: Schema.optional(PartnerId)
})

const Minor = (description: string, example: number) =>
  Schema.Int.annotations({ description: `${description} Integer minor units of \`currency\`.`, examples: [example] })

const DocumentRef = Schema.Struct({
  id: Schema.UUID,
  number: Schema.String.annotations({ examples: ["INV-000041"] })
}).annotations({ identifier: "InvoiceReference", description: "An invoice: its id and number." })

export const InvoiceLine = Schema.Struct({
  line: Schema.Int.annotations({ description: "Line number on the document, from 1.", examples: [1] }),
  kind: Schema.Literal("commission", "refund_credit").annotations({
    description: "`commission`: commission on a booking (an invoice's line). `refund_credit`: commission given back " +
      "on a cancelled, refunded or reduced booking (a credit note's line; negative amounts)."
  }),
  partner: Partner.annotations({ description: "The operator of the booking's tour (its name as at issue)." }),
  booking: Schema.Struct({
    id: Schema.UUID,
    confirmation_code: Schema.String.annotations({ examples: ["FJX-7K2M9Q"] }),
    experience_date: Schema.NullOr(DateString).annotations({ examples: ["2026-10-14"] })
  }).annotations({ identifier: "InvoiceBooking", description: "The booking (no guest details)." }),
  tour: Schema.NullOr(Schema.String).annotations({ examples: ["Fjord Safari"] }),
  description: Schema.String.annotations({ examples: ["Commission FJX-7K2M9Q – Fjord Safari (2026-10-14)"] }),
  commission_rate_percent: Schema.NullOr(Schema.Number).annotations({
    description: "The commission rate of the booking's entries; null when they had different rates.",
    examples: [15]
  }),
  booking_gross_minor: Minor("The booking amount the commission was taken on (negative when given back).", 120000),
  net_minor: Minor("Commission excluding VAT (negative on a credit note).", 18000),
  vat_minor: Minor("VAT on `net_minor` at the document's `vat_rate_percent`, rounded half away from zero.", 4500),
  gross_minor: Minor("`net_minor` + `vat_minor`.", 22500),
  deducted_from_payouts_minor: Minor(
    "Withheld from the operator's payment at payment time by the provider's split (the net commission; negative: " +
      "given back on the refund).",
    18000
  ),
  corrects_invoice: Schema.NullOr(DocumentRef).annotations({
    description: "On a credit note: the invoice that billed this booking's commission (the one this line corrects)."
  }),
  original_net_minor: Schema.NullOr(Schema.Int).annotations({
    description: "On a credit note: the net the corrected invoice billed for this booking.",
    examples: [18000]
  }),
  cancellation_fee_minor: Schema.NullOr(Schema.Int).annotations({
    description: "On a credit note line for a cancellation: the commission (net) that stays billed for the booking " +
      "after every credit so far, i.e. what the marketplace keeps as its cancellation fee (0 when all is given back). " +
      "Null otherwise.",
    examples: [0]
  })
}).annotations({ identifier: "InvoiceLine" })

export const CommissionInvoice = Schema.Struct({
  id: Schema.UUID,
  number: Schema.String.annotations({
    description:
      "The document's number: `INV-` (invoices) or `CN-` (credit notes) and its place in that series; each " +
      "series runs without gaps.",
    examples: ["INV-000042"]
  }),
  type: Schema.Literal(...DOCUMENT_TYPES).annotations({ description: "`invoice` or `credit_note`." }),
  status: Schema.Literal("open", "settled", "credited").annotations({
    description:
      "`open`: an invoice with an amount still payable; `settled`: an invoice fully deducted from payouts; " +
      "`credited`: a credit note. Documents are issued final: there are no drafts."
  }),
  period: Schema.Struct({
    month: Schema.String.annotations({ description: "Delivery month, YYYY-MM (UTC).", examples: ["2026-10"] }),
    start: DateString.annotations({ examples: ["2026-10-01"] }),
    end: DateString.annotations({ description: "Last day of the month, inclusive.", examples: ["2026-10-31"] })
  }).annotations({ identifier: "InvoicePeriod", description: "The delivery period the document covers." }),
  issue_date: DateString.annotations({ examples: ["2026-11-02"] }),
  due_date: DateString.annotations({ examples: ["2026-11-16"] }),
  currency: Schema.String.annotations({ description: "ISO 4217; the bookings' currency.", examples: ["NOK"] }),
  seller: Schema.Struct({
    name: Schema.String.annotations({ examples: ["Tour Partner AS"] }),
    org_number: Schema.String.annotations({ examples: ["999999999"] }),
    vat_number: Schema.String.annotations({
      description: "As printed: `NO <org number> MVA`.",
      examples: ["NO 999 999 999 MVA"]
    }),
    address: Schema.String.annotations({ examples: ["Karl Johans gate 1, 0154 Oslo, Norway"] }),
    email: Schema.NullOr(Schema.String),
    bank_account: Schema.NullOr(Schema.String).annotations({ description: "Where an amount still payable is paid." })
  }).annotations({ identifier: "InvoiceSeller", description: "The marketplace, as at issue." }),
  buyer: Schema.Struct({
    name: Schema.String.annotations({ description: "The legal entity's legal name.", examples: ["Fjord Explorer AS"] }),
    org_number: Schema.NullOr(Schema.String).annotations({ examples: ["912345678"] }),
    partners: Schema.Array(Partner).annotations({
      description: "Every operator paid through this legal entity's payout account (they share its invoices)."
    })
  }).annotations({ identifier: "InvoiceBuyer", description: "The legal entity (payout account), as at issue." }),
  vat_rate_percent: Schema.Number.annotations({ description: "VAT (MVA) rate on the commission.", examples: [25] }),
  net_minor: Minor("Sum of the lines' `net_minor`.", 18000),
  vat_minor: Minor("Sum of the lines' `vat_minor`.", 4500),
  gross_minor: Minor("`net_minor` + `vat_minor`.", 22500),
  deducted_from_payouts_minor: Minor("Sum of the lines' `deducted_from_payouts_minor`.", 18000),
  payable_minor: Minor(
    "`gross_minor` − `deducted_from_payouts_minor`: still payable by the due date (negative on a credit note: owed to " +
      "the operator).",
    4500
  ),
  corrects: Schema.Array(DocumentRef).annotations({
    description: "The invoices a credit note corrects (each line names its own); empty on an invoice."
  }),
  lines: Schema.Array(InvoiceLine).annotations({ description: "One per booking, oldest first." }),
  files: Schema.Struct({
    pdf_url: Schema.String.annotations({ description: "The PDF as issued: a signed link, no key needed." }),
    csv_url: Schema.String.annotations({
      description: "The CSV specification (UTF-8 with BOM, `;`-separated, decimal comma): a signed link."
    }),
    expires_at: DateTimeString.annotations({ description: "The links open nothing after this (15 minutes)." })
  }).annotations({ identifier: "InvoiceFiles" })
}).annotations({ identifier: "CommissionInvoice" })

export const InvoicePage = Schema.Struct(financePage(CommissionInvoice)).annotations({ identifier: "InvoicePage" })
export type InvoicePage = typeof InvoicePage.Type
export type CommissionInvoice = typeof CommissionInvoice.Type

export class InvoicesGroup extends HttpApiGroup.make("invoices")
  .add(
    HttpApiEndpoint.get("list", "/finance/invoices")
      .setUrlParams(InvoiceListParams)
      .addSuccess(InvoicePage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        summary: "Commission invoices and credit notes, newest delivery month first",
        description: "Scope `finance:read`. The documents the marketplace issued to the legal entities (payout " +
          "accounts) of the key's operators (or of `partner_id`): operators paid through one account see the same " +
          "documents. Issued monthly, final (never drafts). Keyset pages with `next_cursor` (bound to the filters). " +
          "Each document carries signed links to its PDF and CSV that expire after 15 minutes: list again for fresh " +
          "ones. docs/api/invoices.md."
      }))
  )
  .annotate(RequiredScope, "finance:read")
  .middleware(PartnerAuth)
  .prefix("/api/v1")
{}

/** The signed file links: no key (the signature is the authority). */
export class InvoiceFilesGroup extends HttpApiGroup.make("invoiceFiles")
  .add(
    HttpApiEndpoint.get("file", "/finance/invoice-files/:file")
      .setPath(Schema.Struct({
        file: Schema.String.annotations({ description: "`<document id>.pdf` or `<document id>.csv`." })
      }))
      .setUrlParams(Schema.Struct({
        exp: Schema.optional(Schema.String).annotations({
          description: "Unix seconds; the link opens nothing after it."
        }),
        sig: Schema.optional(Schema.String).annotations({ description: "The link's signature." })
      }))
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/pdf" }))
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        summary: "A commission document's PDF or CSV, by its signed link",
        description:
          "Open `files.pdf_url` or `files.csv_url` as given; no key. The PDF is `application/pdf`, the CSV " +
          "`text/csv; charset=utf-8`. 404 when the signature does not verify, the link has expired (list the " +
          "invoices again) or there is no such file; the answer does not say which."
      }))
  )
  .prefix("/api/v1")
{}
