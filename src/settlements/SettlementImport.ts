/**
 * Payouts and chargebacks from the payment provider's settlement reports (issue 15 part A): per
 * merchant of `operator_payment_accounts` (each once, however many operators share it), the reports
 * settled since the last imported settlement day (that day included; the first time
 * SETTLEMENT_IMPORT_FIRST_DAYS back), each new one stored with its charges in one transaction
 * (SettlementsRepo.storeReport: idempotent on `(merchant, payoutId)`), then the merchant's
 * unmatched chargebacks matched again. One merchant's failure is logged and recorded
 * (`settlement_merchants.last_outcome`, the run's summary) and never stops the others.
 *
 * The admin CLI's settlement file goes through `importFile`: the same storing, source `file`.
 */
import { Clock, Data, Effect, Option, Redacted } from "effect"
import { annotateSpan } from "../observability/spanFn.js"
import { PaymentProviderConfig } from "../payments/config.js"
import {
  type PaymentAccount,
  PaymentProvider,
  type PaymentProviderError,
  type SettlementCharges,
  type SettlementReport
} from "../ports/PaymentProvider.js"
import { SettlementConfig } from "./config.js"
import { adjustmentsOf, chargebacksOf, importFrom, type ParsedReport, sortAtOf } from "./rules.js"
import { type MerchantToImport, SettlementsRepo } from "./SettlementsRepo.js"

/** Merchants imported at the same time (each one's reports stay in order). */
const MERCHANTS_AT_ONCE = 4

/** Why one merchant's import did not finish (internal: the run records it and goes on). */
export class SettlementImportFailed extends Data.TaggedError("SettlementImportFailed")<{
  readonly merchantId: string
  readonly detail: string
}> {}

export interface MerchantImport {
  readonly merchantId: string
  readonly outcome: "ok" | "failed"
  /** Reports the provider listed from the start day on. */
  readonly reports: number
  /** Payouts stored by this run (new ones). */
  readonly payouts: number
  readonly chargebacks: number
  /** Earlier unmatched chargebacks that matched a booking now. */
  readonly rematched: number
  readonly error?: string
}

export interface ImportRun {
  readonly merchants: number
  readonly failed: number
  readonly payouts: number
  readonly chargebacks: number
  readonly results: ReadonlyArray<MerchantImport>
}

const describe = (e: PaymentProviderError) => `${e._tag} ${e.operation} ${e.reason}: ${e.detail}`

export class SettlementImport extends Effect.Service<SettlementImport>()("Settlements/SettlementImport", {
  effect: Effect.gen(function*() {
    const repo = yield* SettlementsRepo
    const provider = yield* PaymentProvider
    const config = yield* SettlementConfig
    const providerConfig = yield* PaymentProviderConfig

    const accountOf = (m: MerchantToImport): Option.Option<PaymentAccount> => {
      const parts = m.base_url !== null && m.api_key !== null && m.api_secret !== null
        ? Option.some({ baseUrl: m.base_url, apiKey: Redacted.make(m.api_key), apiSecret: Redacted.make(m.api_secret) })
        : Option.all({
          baseUrl: providerConfig.baseUrl,
          apiKey: providerConfig.apiKey,
          apiSecret: providerConfig.apiSecret
        })
      return Option.map(parts, (p) => ({ id: "surfboard", ...p, merchantId: m.merchant_id }))
    }

    const store = (
      merchantId: string,
      report: SettlementReport,
      charges: SettlementCharges,
      source: "provider" | "file"
    ) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        repo.storeReport({
          merchantId,
          report,
          feeVatMinor: charges.feeVatMinor,
          adjustments: adjustmentsOf(charges.charges),
          chargebacks: chargebacksOf(merchantId, report, charges),
          source,
          sortAt: sortAtOf(report, new Date(now))
        }))

    const importMerchant = Effect.fn("SettlementImport.importMerchant")(function*(m: MerchantToImport) {
      const fail = (detail: string) => new SettlementImportFailed({ merchantId: m.merchant_id, detail })
      const partnerId = m.provider_partner_id ?? Option.getOrNull(config.partnerId)
      if (partnerId === null) {
        return yield* fail("no provider partner for the merchant (settlement_merchants or SURFBOARD_PARTNER_ID)")
      }
      const account = accountOf(m)
      if (Option.isNone(account)) return yield* fail("no credentials reach the merchant (SURFBOARD_* unset)")
      yield* annotateSpan({ merchant_id: m.merchant_id })
      const today = new Date(yield* Clock.currentTimeMillis).toISOString().slice(0, 10)
      const from = importFrom(m.last_settlement_day, today, config.firstImportDays)
      const reports = yield* provider.settlementReports(account.value, { partnerId, from }).pipe(
        Effect.mapError((e) => fail(describe(e)))
      )
      const have = yield* repo.known(m.merchant_id, reports.map((r) => r.payoutId))
      let payouts = 0
      let chargebacks = 0
      for (const report of reports) {
        if (have.has(report.payoutId)) continue
        const charges = yield* provider.settlementCharges(account.value, { partnerId, payoutId: report.payoutId })
          .pipe(Effect.mapError((e) => fail(describe(e))))
        const stored = yield* store(m.merchant_id, report, charges, "provider")
        if (stored.created) payouts++
        chargebacks += stored.chargebacks
      }
      const rematched = yield* repo.rematch(m.merchant_id)
      return {
        merchantId: m.merchant_id,
        outcome: "ok",
        reports: reports.length,
        payouts,
        chargebacks,
        rematched
      } satisfies MerchantImport as MerchantImport
    })

    /**
     * Every merchant (or one), each on its own: a failure is recorded and the other merchants go on.
     * A few merchants at a time: each waits on the provider for most of its import.
     */
    const run = Effect.fn("SettlementImport.run")(function*(only?: string) {
      const merchants = yield* repo.merchants(only)
      const results = yield* Effect.forEach(merchants, (m) =>
        importMerchant(m).pipe(
          Effect.tap(() => repo.recordAttempt(m.merchant_id, "ok", null)),
          Effect.catchAll((e) =>
            Effect.gen(function*() {
              yield* Effect.logWarning(`settlement import of merchant ${m.merchant_id} failed: ${e.detail}`)
              yield* repo.recordAttempt(m.merchant_id, "failed", e.detail)
              return {
                merchantId: m.merchant_id,
                outcome: "failed",
                reports: 0,
                payouts: 0,
                chargebacks: 0,
                rematched: 0,
                error: e.detail
              } satisfies MerchantImport
            })
          ),
          // A defect (a database failure) of one merchant is that merchant's failure too.
          Effect.catchAllDefect((defect) =>
            Effect.gen(function*() {
              yield* Effect.logError(`settlement import of merchant ${m.merchant_id} failed`, defect)
              const detail = "internal error (see the logs)"
              yield* repo.recordAttempt(m.merchant_id, "failed", detail).pipe(Effect.ignore)
              return {
                merchantId: m.merchant_id,
                outcome: "failed",
                reports: 0,
                payouts: 0,
                chargebacks: 0,
                rematched: 0,
                error: detail
              } satisfies MerchantImport
            })
          )
        ), { concurrency: MERCHANTS_AT_ONCE })
      return {
        merchants: results.length,
        failed: results.filter((r) => r.outcome === "failed").length,
        payouts: results.reduce((n, r) => n + r.payouts, 0),
        chargebacks: results.reduce((n, r) => n + r.chargebacks, 0),
        results
      } satisfies ImportRun
    })

    /** A settlement file's reports, stored as the job stores them (source `file`); idempotent. */
    const importFile = Effect.fn("SettlementImport.importFile")(
      function*(file: { readonly merchantId: string; readonly reports: ReadonlyArray<ParsedReport> }) {
        let payouts = 0
        let skipped = 0
        let chargebacks = 0
        for (const r of file.reports) {
          const stored = yield* store(file.merchantId, r.report, r.charges, "file")
          if (stored.created) payouts++
          else skipped++
          chargebacks += stored.chargebacks
        }
        const rematched = yield* repo.rematch(file.merchantId)
        return { merchantId: file.merchantId, payouts, skipped, chargebacks, rematched }
      }
    )

    return { run, importFile } as const
  }),
  dependencies: [SettlementsRepo.Default]
}) {}
