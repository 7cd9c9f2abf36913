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
import {
  EXAMPLE_ACCOUNT_PARTNERS,
  EXAMPLE_BOOKING,
  EXAMPLE_COMMISSION_MINOR,
  EXAMPLE_COMMISSION_RATE,
  EXAMPLE_CORRECTED_INVOICE,
  EXAMPLE_FILES,
  EXAMPLE_INVOICE_ID,
  EXAMPLE_PARTNER,
  EXAMPLE_PRICE_MINOR,
  EXAMPLE_TOUR
} from "../examples.js"
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

/** A day or a timestamp field: description and example on the property (their own JSON Schema keeps neither). */
const Day = (example: string, description?: string) =>
  Schema.propertySignature(DateString).annotations({ description, examples: [example] })
const At = (description: string, example: string) =>
  Schema.propertySignature(DateTimeString).annotations({ description, examples: [example] })

/** INV-000042: October 2026's commission on FJX-7K2M9Q, NOK 180.00 + 25 % VAT (examples.ts). */
const EXAMPLE_VAT_MINOR = 4500
const EXAMPLE_LINE = {
  line: 1,
  kind: "commission" as const,
  partner: EXAMPLE_PARTNER,
  booking: {
    id: EXAMPLE_BOOKING.id,
    confirmation_code: EXAMPLE_BOOKING.confirmation_code,
    experience_date: EXAMPLE_BOOKING.experience_date
  },
  tour: EXAMPLE_TOUR,
  description: `Commission ${EXAMPLE_BOOKING.confirmation_code} – ${EXAMPLE_TOUR} (${EXAMPLE_BOOKING.experience_date})`,
  commission_rate_percent: EXAMPLE_COMMISSION_RATE,
  booking_gross_minor: EXAMPLE_PRICE_MINOR,
  net_minor: EXAMPLE_COMMISSION_MINOR,
  vat_minor: EXAMPLE_VAT_MINOR,
  gross_minor: EXAMPLE_COMMISSION_MINOR + EXAMPLE_VAT_MINOR,
  deducted_from_payouts_minor: EXAMPLE_COMMISSION_MINOR,
  corrects_invoice: null,
  original_net_minor: null,
  cancellation_fee_minor: null
}
const EXAMPLE_PERIOD = { month: "2026-10", start: "2026-10-01", end: "2026-10-31" }
const EXAMPLE_SELLER = {
  name: "Tour Partner AS",
  org_number: "999999999",
  vat_number: "NO 999 999 999 MVA",
  address: "Karl Johans gate 1, 0154 Oslo, Norway",
  email: "invoices@tourpartner.example",
  bank_account: "1234.56.78903"
}
const EXAMPLE_BUYER = { name: "Fjord Explorer AS", org_number: "912345678", partners: EXAMPLE_ACCOUNT_PARTNERS }
const EXAMPLE_INVOICE = {
  id: EXAMPLE_INVOICE_ID,
  number: "INV-000042",
  type: "invoice" as const,
  status: "open" as const,
  period: EXAMPLE_PERIOD,
  issue_date: "2026-11-02",
  due_date: "2026-11-16",
  currency: "NOK",
  seller: EXAMPLE_SELLER,
  buyer: EXAMPLE_BUYER,
  vat_rate_percent: 25,
  net_minor: EXAMPLE_LINE.net_minor,
  vat_minor: EXAMPLE_LINE.vat_minor,
  gross_minor: EXAMPLE_LINE.gross_minor,
  deducted_from_payouts_minor: EXAMPLE_LINE.deducted_from_payouts_minor,
  payable_minor: EXAMPLE_LINE.gross_minor - EXAMPLE_LINE.deducted_from_payouts_minor,
  corrects: [],
  lines: [EXAMPLE_LINE],
  files: EXAMPLE_FILES
}

const DocumentRef = Schema.Struct({
  id: Schema.UUID.annotations({ examples: [EXAMPLE_CORRECTED_INVOICE.id] }),
  number: Schema.String.annotations({ examples: [EXAMPLE_CORRECTED_INVOICE.number] })
}).annotations({
  identifier: "InvoiceReference",
  description: "An invoice: its id and number.",
  examples: [EXAMPLE_CORRECTED_INVOICE]
})

export const InvoiceLine = Schema.Struct({
  line: Schema.Int.annotations({ description: "Line number on the document, from 1.", examples: [1] }),
  kind: Schema.Literal("commission", "refund_credit").annotations({
    description: "`commission`: commission on a booking (an invoice's line). `refund_credit`: commission given back " +
      "on a cancelled, refunded or reduced booking (a credit note's line; negative amounts).",
    examples: [EXAMPLE_LINE.kind]
  }),
  partner: Partner.annotations({
    description: "The operator of the booking's tour (its name as at issue).",
    examples: [EXAMPLE_PARTNER]
  }),
  booking: Schema.Struct({
    id: Schema.UUID.annotations({ examples: [EXAMPLE_LINE.booking.id] }),
    confirmation_code: Schema.String.annotations({ examples: [EXAMPLE_LINE.booking.confirmation_code] }),
    experience_date: Schema.NullOr(DateString).annotations({ examples: [EXAMPLE_LINE.booking.experience_date] })
  }).annotations({
    identifier: "InvoiceBooking",
    description: "The booking (no guest details).",
    examples: [EXAMPLE_LINE.booking]
  }),
  tour: Schema.NullOr(Schema.String).annotations({ examples: [EXAMPLE_LINE.tour] }),
  description: Schema.String.annotations({ examples: [EXAMPLE_LINE.description] }),
  commission_rate_percent: Schema.NullOr(Schema.Number).annotations({
    description: "The commission rate of the booking's entries; null when they had different rates.",
    examples: [EXAMPLE_LINE.commission_rate_percent]
  }),
  booking_gross_minor: Minor(
    "The booking amount the commission was taken on (negative when given back).",
    EXAMPLE_LINE.booking_gross_minor
  ),
  net_minor: Minor("Commission excluding VAT (negative on a credit note).", EXAMPLE_LINE.net_minor),
  vat_minor: Minor(
    "VAT on `net_minor` at the document's `vat_rate_percent`, rounded half away from zero.",
    EXAMPLE_LINE.vat_minor
  ),
  gross_minor: Minor("`net_minor` + `vat_minor`.", EXAMPLE_LINE.gross_minor),
  deducted_from_payouts_minor: Minor(
    "Withheld from the operator's payment at payment time by the provider's split (the net commission; negative: " +
      "given back on the refund).",
    EXAMPLE_LINE.deducted_from_payouts_minor
  ),
  corrects_invoice: Schema.NullOr(DocumentRef).annotations({
    description: "On a credit note: the invoice that billed this booking's commission (the one this line corrects).",
    examples: [EXAMPLE_CORRECTED_INVOICE]
  }),
  original_net_minor: Schema.NullOr(Schema.Int).annotations({
    description: "On a credit note: the net the corrected invoice billed for this booking.",
    examples: [EXAMPLE_COMMISSION_MINOR]
  }),
  cancellation_fee_minor: Schema.NullOr(Schema.Int).annotations({
    description: "On a credit note line for a cancellation: the commission (net) that stays billed for the booking " +
      "after every credit so far, i.e. what the marketplace keeps as its cancellation fee (0 when all is given back). " +
      "Null otherwise.",
    examples: [0]
  })
}).annotations({ identifier: "InvoiceLine", examples: [EXAMPLE_LINE] })

export const CommissionInvoice = Schema.Struct({
  id: Schema.UUID.annotations({ examples: [EXAMPLE_INVOICE.id] }),
  number: Schema.String.annotations({
    description:
      "The document's number: `INV-` (invoices) or `CN-` (credit notes) and its place in that series; each " +
      "series runs without gaps.",
    examples: [EXAMPLE_INVOICE.number]
  }),
  type: Schema.Literal(...DOCUMENT_TYPES).annotations({
    description: "`invoice` or `credit_note`.",
    examples: [EXAMPLE_INVOICE.type]
  }),
  status: Schema.Literal("open", "settled", "credited").annotations({
    description:
      "`open`: an invoice with an amount still payable; `settled`: an invoice fully deducted from payouts; " +
      "`credited`: a credit note. Documents are issued final: there are no drafts.",
    examples: [EXAMPLE_INVOICE.status]
  }),
  period: Schema.Struct({
    month: Schema.String.annotations({
      description: "Delivery month, YYYY-MM (UTC).",
      examples: [EXAMPLE_PERIOD.month]
    }),
    start: Day(EXAMPLE_PERIOD.start),
    end: Day(EXAMPLE_PERIOD.end, "Last day of the month, inclusive.")
  }).annotations({
    identifier: "InvoicePeriod",
    description: "The delivery period the document covers.",
    examples: [EXAMPLE_PERIOD]
  }),
  issue_date: Day(EXAMPLE_INVOICE.issue_date),
  due_date: Day(EXAMPLE_INVOICE.due_date),
  currency: Schema.String.annotations({
    description: "ISO 4217; the bookings' currency.",
    examples: [EXAMPLE_INVOICE.currency]
  }),
  seller: Schema.Struct({
    name: Schema.String.annotations({ examples: [EXAMPLE_SELLER.name] }),
    org_number: Schema.String.annotations({ examples: [EXAMPLE_SELLER.org_number] }),
    vat_number: Schema.String.annotations({
      description: "As printed: `NO <org number> MVA`.",
      examples: [EXAMPLE_SELLER.vat_number]
    }),
    address: Schema.String.annotations({ examples: [EXAMPLE_SELLER.address] }),
    email: Schema.NullOr(Schema.String).annotations({ examples: [EXAMPLE_SELLER.email] }),
    bank_account: Schema.NullOr(Schema.String).annotations({
      description: "Where an amount still payable is paid.",
      examples: [EXAMPLE_SELLER.bank_account]
    })
  }).annotations({
    identifier: "InvoiceSeller",
    description: "The marketplace, as at issue.",
    examples: [EXAMPLE_SELLER]
  }),
  buyer: Schema.Struct({
    name: Schema.String.annotations({
      description: "The legal entity's legal name.",
      examples: [EXAMPLE_BUYER.name]
    }),
    org_number: Schema.NullOr(Schema.String).annotations({ examples: [EXAMPLE_BUYER.org_number] }),
    partners: Schema.Array(Partner).annotations({
      description: "Every operator paid through this legal entity's payout account (they share its invoices).",
      examples: [EXAMPLE_BUYER.partners]
    })
  }).annotations({
    identifier: "InvoiceBuyer",
    description: "The legal entity (payout account), as at issue.",
    examples: [EXAMPLE_BUYER]
  }),
  vat_rate_percent: Schema.Number.annotations({
    description: "VAT (MVA) rate on the commission.",
    examples: [EXAMPLE_INVOICE.vat_rate_percent]
  }),
  net_minor: Minor("Sum of the lines' `net_minor`.", EXAMPLE_INVOICE.net_minor),
  vat_minor: Minor("Sum of the lines' `vat_minor`.", EXAMPLE_INVOICE.vat_minor),
  gross_minor: Minor("`net_minor` + `vat_minor`.", EXAMPLE_INVOICE.gross_minor),
  deducted_from_payouts_minor: Minor(
    "Sum of the lines' `deducted_from_payouts_minor`.",
    EXAMPLE_INVOICE.deducted_from_payouts_minor
  ),
  payable_minor: Minor(
    "`gross_minor` − `deducted_from_payouts_minor`: still payable by the due date (negative on a credit note: owed to " +
      "the operator).",
    EXAMPLE_INVOICE.payable_minor
  ),
  corrects: Schema.Array(DocumentRef).annotations({
    description: "The invoices a credit note corrects (each line names its own); empty on an invoice.",
    examples: [[EXAMPLE_CORRECTED_INVOICE]]
  }),
  lines: Schema.Array(InvoiceLine).annotations({
    description: "One per booking, oldest first.",
    examples: [EXAMPLE_INVOICE.lines]
  }),
  files: Schema.Struct({
    pdf_url: Schema.String.annotations({
      description: "The PDF as issued: a signed link, no key needed.",
      examples: [EXAMPLE_FILES.pdf_url]
    }),
    csv_url: Schema.String.annotations({
      description: "The CSV specification (UTF-8 with BOM, `;`-separated, decimal comma): a signed link.",
      examples: [EXAMPLE_FILES.csv_url]
    }),
    expires_at: At("The links open nothing after this (15 minutes).", EXAMPLE_FILES.expires_at)
  }).annotations({ identifier: "InvoiceFiles", examples: [EXAMPLE_FILES] })
}).annotations({ identifier: "CommissionInvoice", examples: [EXAMPLE_INVOICE] })

export const InvoicePage = Schema.Struct(financePage(CommissionInvoice)).annotations({
  identifier: "InvoicePage",
  examples: [{ data: [EXAMPLE_INVOICE], next_cursor: null }]
})
export type InvoicePage = typeof InvoicePage.Type
export type CommissionInvoice = typeof CommissionInvoice.Type

export class InvoicesGroup extends HttpApiGroup.make("invoices")
  .annotate(OpenApi.Title, "Invoices")
  .annotate(OpenApi.Description, "Commission invoices and credit notes of the legal entity of the key's operators.")
  .add(
    HttpApiEndpoint.get("list", "/finance/invoices")
      .setUrlParams(InvoiceListParams)
      .addSuccess(InvoicePage)
      .addError(InvalidRequest)
      .addError(NotFound)
      .annotateContext(OpenApi.annotations({
        identifier: "listInvoices",
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
  .annotate(OpenApi.Title, "Invoice files")
  .annotate(OpenApi.Description, "The PDF of one invoice or credit note.")
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
        identifier: "getInvoiceFile",
        summary: "A commission document's PDF or CSV, by its signed link",
        description:
          "Open `files.pdf_url` or `files.csv_url` as given; no key. The PDF is `application/pdf`, the CSV " +
          "`text/csv; charset=utf-8`. 404 when the signature does not verify, the link has expired (list the " +
          "invoices again) or there is no such file; the answer does not say which."
      }))
      // One success schema has one media type: the CSV link answers `text/csv` too, documented beside the PDF.
      .annotate(OpenApi.Transform, (op) => {
        const ok = (op as { responses?: Record<string, { content?: Record<string, unknown> }> }).responses?.["200"]
        if (ok?.content) ok.content["text/csv"] = { schema: { type: "string" } }
        return op
      })
  )
  .prefix("/api/v1")
{}
