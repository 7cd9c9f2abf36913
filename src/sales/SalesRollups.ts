/**
 * The per-day sales rollups (migration 0024; docs/api/sales.md "How the figures are kept"): own
 * sales and other-channel sales summed per operator and UTC day, rebuilt per group from what changed
 * since the last run. A run reads the database's clock first, takes the groups whose sources changed
 * after the last run's start minus an overlap (a transaction that started before the last run and
 * committed after it is not missed), rebuilds them and moves the watermark to its own start, all in
 * one transaction. The first run (no watermark) rebuilds every group.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { transactionAtEdge } from "../db/repoEdge.js"
import { annotateSpan } from "../observability/spanFn.js"
import { SalesConfig } from "./config.js"
import { type Group, type Rollup, SalesRollupsRepo } from "./SalesRollupsRepo.js"

/** Groups rebuilt per statement: keeps one statement's arrays and locks small. */
const BATCH = 500

export class SalesRollups extends Effect.Service<SalesRollups>()("Sales/SalesRollups", {
  effect: Effect.gen(function*() {
    const repo = yield* SalesRollupsRepo
    const sql = yield* SqlClient.SqlClient
    const config = yield* SalesConfig
    const inTransaction = transactionAtEdge(sql)

    const run = (
      rollup: Rollup,
      changed: (since: Date | null) => Effect.Effect<ReadonlyArray<Group>>,
      rebuild: (groups: ReadonlyArray<Group>) => Effect.Effect<unknown>
    ) =>
      inTransaction(Effect.gen(function*() {
        yield* repo.lock(rollup)
        const started = yield* repo.now()
        const last = yield* repo.watermark(rollup)
        const since = Option.match(last, {
          onNone: () => null,
          onSome: (at) => new Date(at.getTime() - config.rollupOverlapSeconds * 1000)
        })
        const groups = yield* changed(since)
        for (let i = 0; i < groups.length; i += BATCH) yield* rebuild(groups.slice(i, i + BATCH))
        yield* repo.setWatermark(rollup, started)
        return { groups: groups.length, full: since === null }
      }))

    /** Brings both rollups up to date; answers how many (operator, day) groups each rebuilt. */
    const refresh = Effect.fn("SalesRollups.refresh")(function*() {
      const own = yield* run("own", repo.changedOwnGroups, repo.rebuildOwn)
      const channels = yield* run("channels", repo.changedChannelGroups, repo.rebuildChannels)
      yield* annotateSpan({ own: own.groups, channels: channels.groups })
      return { own, channels }
    })

    return { refresh } as const
  }),
  dependencies: [SalesRollupsRepo.Default]
}) {}
