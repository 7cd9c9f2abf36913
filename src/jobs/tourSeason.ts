/**
 * Every 30 minutes by default (TOUR_SEASON_CRON): `from_price` and `season` of every published tour
 * linked to a booking system, computed again from its next 12 months of departures into
 * `tour_season_cache` (src/catalogue/TourSeason.ts), and before that the tours' booking-system facts
 * (rating, duration, departure times, pricing categories, rates) from one catalogue read per account.
 * One account not answering never stops the others.
 */
import { ClusterCron } from "@effect/cluster"
import { Effect, Layer } from "effect"
import { TourSeason } from "../catalogue/TourSeason.js"
import type { JobsConfig } from "./config.js"
import { recordedRun } from "./runs.js"

export const TOUR_SEASON = "tour-season"

export const tourSeasonJob = (config: Pick<JobsConfig, "tourSeasonCron">) =>
  ClusterCron.make({
    name: TOUR_SEASON,
    cron: config.tourSeasonCron,
    execute: recordedRun(TOUR_SEASON, () =>
      Effect.flatMap(TourSeason, (season) =>
        season.refresh()).pipe(Effect.map(({ results: _, ...summary }) => summary))),
    // A run missed by more than 20 minutes is skipped: the next one is near.
    skipIfOlderThan: "20 minutes"
  }).pipe(Layer.provide(TourSeason.Default))
