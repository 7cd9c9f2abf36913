/**
 * The one interface through which the service moves money: the payment provider (Surfboard
 * Payments today; the sandbox speaks the same dialect). It serves the partner API's writes (a full
 * refund or a same-day void when a booking is cancelled, balance payment links) and the quickbook
 * desk (verifying a card-terminal payment before booking, refunding when the booking fails or the
 * sale was paid twice).
 *
 * Conventions:
 * - Money is integer minor units with an ISO 4217 alpha currency (`NOK`, `EUR`); the adapter
 *   converts to and from the provider's own format.
 * - Ids (orders, payments, terminals, merchants) are the provider's own, as strings.
 * - Every call names the account it acts on: base URL, credentials and the merchant the call is
 *   made for. The credentials never reach logs, errors or spans.
 * - Every call that can move money (`createOrder`, `createPaymentLink`, `refund`, `voidPayment`,
 *   `cancelPayment`, `cancelPaymentLink`) takes our own `idempotencyReference`. Sent again with the
 *   same reference and the same request, it answers what the first call did and never moves money
 *   a second time; the same reference with a different request is rejected (`idempotency_conflict`).
 *   The adapter sends such a call once and never retries it by itself: the caller retries, with the
 *   same reference, after an `Unavailable` (see docs/payment-provider.md for what Surfboard itself
 *   is assumed to offer).
 * - `PaymentProviderUnavailable` means "did not answer in time, answered 5xx, or the connection
 *   failed": the outcome is unknown; retry with the same idempotency reference, or read the state.
 *   `PaymentProviderRejected` is a definite "no" with a reason, never worth retrying as is.
 */
import { Context, Data, type Effect, type Redacted } from "effect"

/** A merchant at the provider and the credentials to act for it. */
export interface PaymentAccount {
  /** Names the account in errors and spans (never a secret), e.g. `surfboard-live`. */
  readonly id: string
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly apiSecret: Redacted.Redacted<string>
  /** The merchant every call is made for (Surfboard's `MERCHANT-ID`). */
  readonly merchantId: string
  /** The merchant's online (payment page) terminal: where payment links are created. */
  readonly paymentPageTerminalId?: string | null | undefined
}

export class PaymentProviderUnavailable extends Data.TaggedError("PaymentProviderUnavailable")<{
  readonly accountId: string
  readonly operation: string
  /** timeout, http_5xx, rate_limited, connection, bad_response */
  readonly reason: string
  readonly detail: string
}> {}

export class PaymentProviderRejected extends Data.TaggedError("PaymentProviderRejected")<{
  readonly accountId: string
  readonly operation: string
  /**
   * unauthorized, forbidden, not_found, invalid, terminal_not_found, not_paid, currency_mismatch,
   * refund_exceeds_paid, cannot_void, already_completed, already_paid, already_cancelled,
   * idempotency_conflict
   */
  readonly reason: string
  readonly detail: string
}> {}

export type PaymentProviderError = PaymentProviderUnavailable | PaymentProviderRejected

/** VAT included in an amount, at one rate. */
export interface TaxLine {
  readonly amountMinor: number
  readonly percentage: number
  readonly type: "VAT"
}

/** A share of the sale for a service provider (Surfboard `controlFunctions.serviceProviders`). */
export interface ServiceProviderShare {
  readonly serviceProviderId: string
  readonly amount: {
    readonly percentage?: number | undefined
    readonly fixedMinor?: number | undefined
    readonly adjustmentTypes?: ReadonlyArray<string> | undefined
  }
}

export interface NewOrder {
  /** The terminal that takes the payment: a card terminal, or an online (payment page) terminal. */
  readonly terminalId: string
  /** Our reference of the sale, shown on the provider's side (quickbook: the sale reference). */
  readonly referenceId: string
  readonly amountMinor: number
  readonly currency: string
  /** The order line's text (receipts). */
  readonly description: string
  readonly taxLines?: ReadonlyArray<TaxLine> | undefined
  readonly serviceProviders?: ReadonlyArray<ServiceProviderShare> | undefined
  readonly idempotencyReference: string
}

export interface CreatedOrder {
  readonly orderId: string
  /** The payment started on the order (a card terminal shows it at once); null when none yet. */
  readonly paymentId: string | null
  /** For online terminals: the hosted page where the order is paid. */
  readonly paymentPageUrl: string | null
}

/**
 * pending: nothing paid yet; paid: paid in full (voided or not, see `voided`); partially_paid;
 * cancelled: cancelled before payment (or its payment page lapsed); processed: a payment is being
 * processed.
 */
export type OrderState = "pending" | "paid" | "partially_paid" | "cancelled" | "processed"

export interface PaymentAttempt {
  readonly paymentId: string
  /** initiated, processing, processed, completed, failed, cancelled */
  readonly status: string
  readonly method: string | null
  readonly amountMinor: number
  readonly failureReason: string | null
}

export interface Transaction {
  readonly transactionId: string
  readonly paymentId: string
  readonly type: "purchase" | "return"
  /** Always positive: money received for a purchase, money returned for a return. */
  readonly amountMinor: number
  readonly currency: string
  readonly voided: boolean
  readonly at: Date
  readonly merchantId: string
  readonly terminalId: string
  readonly referenceId: string | null
}

/**
 * What the provider says about one order (a sale, a payment link, or a refund). A refund is an
 * order of its own: refunding a purchase does not change the purchase's status.
 */
export interface OrderStatus {
  readonly orderId: string
  /** The merchant the order was read for (the provider scopes orders by merchant). */
  readonly merchantId: string
  readonly terminalId: string
  readonly referenceId: string | null
  /** A refund is a `return` order linked to its purchase. */
  readonly type: "purchase" | "return"
  readonly purchaseOrderId: string | null
  readonly state: OrderState
  /** The provider's own order status, as sent. */
  readonly providerStatus: string
  /** The order's total, positive for a purchase and for a return alike. */
  readonly amountMinor: number
  readonly currency: string
  /** Money that moved and was not voided: received for a purchase, returned for a return. */
  readonly paidMinor: number
  /** Paid in full and not voided: what a sale needs before it is booked. */
  readonly paid: boolean
  /** Every transaction of the order was voided (the money never left the card). */
  readonly voided: boolean
  /** When the first (purchase) transaction happened. */
  readonly paidAt: Date | null
  readonly taxLines: ReadonlyArray<TaxLine>
  readonly payments: ReadonlyArray<PaymentAttempt>
  readonly transactions: ReadonlyArray<Transaction>
}

export interface RefundRequest {
  /** The paid order the money goes back from. */
  readonly purchaseOrderId: string
  /** Our writes refund in full; the provider also accepts less. */
  readonly amountMinor: number
  readonly currency: string
  readonly idempotencyReference: string
  /** Shown on the refund order's line; default "Refund". */
  readonly description?: string | undefined
  readonly taxLines?: ReadonlyArray<TaxLine> | undefined
}

/**
 * completed: all of it returned; partial: the provider returned less than asked (the rest needs a
 * new refund); pending: accepted and still settling (read `refundStatus` later); failed.
 */
export type RefundState = "completed" | "partial" | "pending" | "failed"

export interface Refund {
  readonly refundOrderId: string
  readonly paymentId: string | null
  readonly purchaseOrderId: string
  readonly state: RefundState
  readonly requestedMinor: number
  readonly refundedMinor: number
  readonly currency: string
}

export interface VoidResult {
  readonly paymentId: string
  /** voided: the money never leaves the card; pending: the void is still settling. */
  readonly state: "voided" | "pending"
}

export interface CancelResult {
  readonly paymentId: string
  /** The payment had not completed: nothing was charged. */
  readonly state: "cancelled" | "failed"
}

export interface NewPaymentLink {
  readonly amountMinor: number
  readonly currency: string
  /** Our reference (e.g. the booking's), shown on the provider's side. */
  readonly referenceId: string
  /** The line the guest sees on the payment page. */
  readonly description: string
  /** When the page stops taking payments; default: the provider's (the sandbox: 7 days). */
  readonly expiresAt?: Date | null | undefined
  readonly taxLines?: ReadonlyArray<TaxLine> | undefined
  readonly serviceProviders?: ReadonlyArray<ServiceProviderShare> | undefined
  readonly idempotencyReference: string
}

export type PaymentLinkState = "open" | "paid" | "expired" | "cancelled"

export interface PaymentLink {
  /** The provider's order id behind the link. */
  readonly linkId: string
  readonly url: string
  readonly state: PaymentLinkState
  readonly amountMinor: number
  readonly currency: string
  readonly expiresAt: Date | null
}

export interface PaymentLinkStatus extends Omit<PaymentLink, "url"> {
  readonly paidMinor: number
  readonly paidAt: Date | null
  readonly paymentId: string | null
}

export interface PaymentProviderClient {
  /** An order for a card-terminal sale, or on an online terminal (its payment page in the answer). */
  readonly createOrder: (account: PaymentAccount, order: NewOrder) => Effect.Effect<CreatedOrder, PaymentProviderError>
  /** Order and payment status, amounts, merchant, terminal, reference and transactions. */
  readonly orderStatus: (account: PaymentAccount, orderId: string) => Effect.Effect<OrderStatus, PaymentProviderError>
  /** Returns money from a paid order as a negative (return) order linked to it. */
  readonly refund: (account: PaymentAccount, request: RefundRequest) => Effect.Effect<Refund, PaymentProviderError>
  /** Where a refund stands now (after `pending` or `partial`). */
  readonly refundStatus: (account: PaymentAccount, refundOrderId: string) => Effect.Effect<Refund, PaymentProviderError>
  /**
   * Voids a completed payment before it settles: only the same UTC day before 23:00 UTC
   * (`voidDeadline`); later it is rejected with `cannot_void` and a refund is needed.
   */
  readonly voidPayment: (
    account: PaymentAccount,
    request: { readonly paymentId: string; readonly idempotencyReference: string }
  ) => Effect.Effect<VoidResult, PaymentProviderError>
  /** Stops a payment that has not completed; a completed one is rejected with `already_completed`. */
  readonly cancelPayment: (
    account: PaymentAccount,
    request: { readonly paymentId: string; readonly idempotencyReference: string }
  ) => Effect.Effect<CancelResult, PaymentProviderError>
  /** A hosted payment page for an amount, on the account's payment page terminal. */
  readonly createPaymentLink: (
    account: PaymentAccount,
    link: NewPaymentLink
  ) => Effect.Effect<PaymentLink, PaymentProviderError>
  readonly paymentLinkStatus: (
    account: PaymentAccount,
    linkId: string
  ) => Effect.Effect<PaymentLinkStatus, PaymentProviderError>
  /** Closes an unpaid link; closing a closed one succeeds; a paid one is rejected with `already_paid`. */
  readonly cancelPaymentLink: (
    account: PaymentAccount,
    request: { readonly linkId: string; readonly idempotencyReference: string }
  ) => Effect.Effect<void, PaymentProviderError>
  /**
   * The merchant's settlement reports (payouts), oldest settlement day first; with `from`, only
   * those settled on or after that day (issue 15 part A; docs/payment-provider.md "Settlement reports").
   */
  readonly settlementReports: (
    account: PaymentAccount,
    request: SettlementReportsRequest
  ) => Effect.Effect<ReadonlyArray<SettlementReport>, PaymentProviderError>
  /** One report's charges section: the fee VAT and the itemised charges (chargebacks among them). */
  readonly settlementCharges: (
    account: PaymentAccount,
    request: { readonly partnerId: string; readonly payoutId: string }
  ) => Effect.Effect<SettlementCharges, PaymentProviderError>
  // Pay-later charging (issue 15, part B): saved cards and merchant-initiated charges.
  /** The cards a paid order saved as tokens (an order made with `tokenize`); only token ids, never card data. */
  readonly savedCards: (account: PaymentAccount, orderId: string) => Effect.Effect<
    ReadonlyArray<SavedCard>,
    PaymentProviderError
  >
  /**
   * A merchant-initiated charge of a saved card (the guest is not present). Sent once under its
   * idempotency reference; answers the outcome: paid, a soft decline (worth retrying later), a hard
   * decline, or SCA required (the guest has to pay themselves), or `pending` while it is processed.
   */
  readonly chargeSavedCard: (
    account: PaymentAccount,
    charge: SavedCardCharge
  ) => Effect.Effect<SavedCardChargeResult, PaymentProviderError>
  /** The charge made under our reference (`referenceId`), if the provider has one: resolves an unknown outcome. */
  readonly findCharge: (
    account: PaymentAccount,
    referenceId: string
  ) => Effect.Effect<SavedCardChargeResult | null, PaymentProviderError>
}

// ---- Settlement reports and their charges (issue 15 part A: payouts and chargebacks) ----

/** DAILY, WEEKLY or MONTHLY: the merchant's settlement frequency. */
export type SettlementReportType = "DAILY" | "WEEKLY" | "MONTHLY"

export interface SettlementReportsRequest {
  /** The partner the merchant belongs to (Surfboard's path names both). */
  readonly partnerId: string
  /** First settlement day (YYYY-MM-DD), inclusive; absent: every report. */
  readonly from?: string | undefined
}

/** One payout as the provider reports it. Amounts in `currency` (NOK) minor units. */
export interface SettlementReport {
  readonly payoutId: string
  readonly merchantId: string
  readonly settlementDate: string | null
  readonly transactionsFrom: string | null
  readonly transactionsTo: string | null
  readonly reportType: SettlementReportType | null
  readonly currency: string
  /** Sales settled (positive). */
  readonly salesMinor: number
  /** Refunds settled, negative (the provider reports them positive). */
  readonly refundsMinor: number
  /** The provider's fees (positive: what was deducted), VAT excluded. */
  readonly feesMinor: number
  /** What was paid out, as reported; negative when the charges exceeded the sales (carried over). */
  readonly payoutMinor: number
  /** The report's PDF. */
  readonly pdfUrl: string | null
}

/**
 * SERVICE_PROVIDER_FEE, CHARGEBACK, CHARGEBACK_FEE, PARTNER_FEE, PREVIOUS_PENDING_LIABILITY, or
 * another type the provider adds (kept as sent).
 */
export type SettlementChargeType = string

export interface SettlementCharge {
  /** The provider's id of the charge line (unique within its report). */
  readonly chargeId: string
  readonly type: SettlementChargeType
  readonly description: string
  readonly date: string | null
  /** Money taken from the payout (positive). */
  readonly debitMinor: number
  /** Money added to the payout (positive). */
  readonly creditMinor: number
  /** The order and payment a chargeback (or its fee) concerns. */
  readonly orderId: string | null
  readonly paymentId: string | null
  /** The order's reference (ours: the booking's confirmation code or the sale's reference). */
  readonly referenceId: string | null
  /** The disputed transaction's day, amount and currency (chargebacks). */
  readonly transactionDate: string | null
  readonly transactionAmountMinor: number | null
  readonly transactionCurrency: string | null
}

export interface SettlementCharges {
  readonly payoutId: string
  /** VAT on the provider's fees (25 % in Norway). */
  readonly feeVatMinor: number
  readonly charges: ReadonlyArray<SettlementCharge>
}

// ---------------------------------------------------------------------------------------------
// Pay-later charging (issue 15, part B)

/** A card saved at the provider by a tokenised payment: the token's id only. */
export interface SavedCard {
  readonly tokenId: string
  readonly createdAt: Date | null
}

export interface SavedCardCharge {
  readonly tokenId: string
  readonly amountMinor: number
  readonly currency: string
  /** Our reference of this attempt, set on the provider's order: `findCharge` looks it up by it. */
  readonly referenceId: string
  /** The order line's text (the guest's statement). */
  readonly description: string
  readonly idempotencyReference: string
}

/** paid; soft_decline (e.g. insufficient funds: try again later); hard_decline; sca_required; pending (processing). */
export type SavedCardChargeOutcome = "paid" | "soft_decline" | "hard_decline" | "sca_required" | "pending"

export interface SavedCardChargeResult {
  readonly orderId: string
  readonly paymentId: string | null
  readonly outcome: SavedCardChargeOutcome
  /** The provider's failure reason, as sent (e.g. INSUFFICIENT_FUNDS); null when paid. */
  readonly declineReason: string | null
  readonly paidAt: Date | null
}

/** The port. */
export class PaymentProvider extends Context.Tag("Ports/PaymentProvider")<PaymentProvider, PaymentProviderClient>() {}

/** Hour (UTC) of the provider's daily settlement cut-off: a payment is voidable until then, the same UTC day. */
export const VOID_CUTOFF_HOUR_UTC = 23

/** The last moment a payment made at `paidAt` can be voided instead of refunded (exclusive). */
export const voidDeadline = (paidAt: Date): Date =>
  new Date(Date.UTC(paidAt.getUTCFullYear(), paidAt.getUTCMonth(), paidAt.getUTCDate(), VOID_CUTOFF_HOUR_UTC))

/** Whether a payment made at `paidAt` can still be voided at `now`; otherwise it has to be refunded. */
export const canVoid = (paidAt: Date, now: Date): boolean => now.getTime() < voidDeadline(paidAt).getTime()
