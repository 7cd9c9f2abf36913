/** Every scheduled job, registered in one place, on the cluster (or none when JOBS=false). */
import { Effect, Layer } from "effect"
import { analyticsRollupsJobLive } from "./analyticsRollups.js"
import { analyticsSaltsJobLive } from "./analyticsSalts.js"
import { bookingChangeRecoveryJob } from "./bookingChangeRecovery.js"
import { clusterLayer } from "./cluster.js"
import { commissionCloseJob } from "./commissionClose.js"
import { JobsConfig } from "./config.js"
import { exchangeRatesJobLive } from "./exchangeRates.js"
import { idempotencyCleanupJob } from "./idempotencyCleanup.js"
import { mirrorJobs } from "./mirrorRefresh.js"
import { oauthCleanupJob } from "./oauthCleanup.js"
import { outboxSenderJob } from "./outboxSender.js"
import { payLaterChargerJob } from "./payLaterCharger.js"
import { paymentLinkWatchJob } from "./paymentLinkWatch.js"
import { quickbookExpiryJob } from "./quickbookExpiry.js"
import { quickbookRecoveryJob } from "./quickbookRecovery.js"
import { salesLedgerJobs } from "./salesLedger.js"
import { salesRollupsJob } from "./salesRollups.js"
import { settlementImportJobLive } from "./settlementImport.js"
import { tourSeasonJob } from "./tourSeason.js"

export const JobsLive = Layer.unwrapEffect(
  Effect.map(JobsConfig, (config) =>
    config.enabled
      ? Layer.mergeAll(
        mirrorJobs(config),
        idempotencyCleanupJob(config),
        oauthCleanupJob(config),
        outboxSenderJob(config),
        bookingChangeRecoveryJob(config),
        paymentLinkWatchJob(config),
        tourSeasonJob(config),
        quickbookRecoveryJob(config),
        quickbookExpiryJob(config),
        salesRollupsJob(config),
        exchangeRatesJobLive,
        salesLedgerJobs,
        analyticsSaltsJobLive,
        analyticsRollupsJobLive,
        payLaterChargerJob,
        settlementImportJobLive,
        commissionCloseJob
      ).pipe(Layer.provide(clusterLayer(config)))
      : Layer.empty)
)
