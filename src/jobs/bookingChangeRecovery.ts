/**
 * Every few minutes: cancels a crash left open are finished and refunds still open after a cancel
 * are followed up (src/partner/cancels/CancelRecovery.ts); reschedules a crash left at `moving` or
 * `moved` past their lease are finished once (the booking system is re-read to see whether the line
 * moved; then the service's booking, mirror row and emails commit together, or the change is
 * abandoned; src/partner/reschedules/RescheduleRecovery.ts). Both take the stale changes from the
 * one recovery scan of src/partner/bookingChanges/BookingChanges.ts.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { CancelRecovery } from "../partner/cancels/CancelRecovery.js"
import { RescheduleRecovery } from "../partner/reschedules/RescheduleRecovery.js"
import type { JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const BOOKING_CHANGE_RECOVERY = "booking-change-recovery"

export const bookingChangeRecoveryJob = (config: Pick<JobsConfig, "bookingChangeRecoveryCron">) =>
  ClusterCron.make({
    name: BOOKING_CHANGE_RECOVERY,
    cron: config.bookingChangeRecoveryCron,
    execute: recordedRun(BOOKING_CHANGE_RECOVERY, () =>
      Effect.all({
        reschedules: Effect.flatMap(RescheduleRecovery, (r) => r.recover()),
        cancels: Effect.flatMap(CancelRecovery, (c) => c.recover())
      })),
    skipIfOlderThan: "10 minutes"
  }).pipe(Layer.provide([RescheduleRecovery.Default, CancelRecovery.Default]))
