/**
 * The deadline of a shutdown: from the first SIGTERM or SIGINT, the process has SHUTDOWN_TIMEOUT to
 * drain HTTP, stop the jobs and the cluster runner and close the pool (NodeRuntime.runMain interrupts
 * the service on the signal and exits once its scope has closed). Past the deadline it exits with
 * code 1 anyway: a finalizer that waits on a database that does not answer, or a client that never
 * finishes its request, can no longer keep it running.
 */
import { Duration, Effect, Runtime } from "effect"
import { ShutdownConfig } from "./config.js"

export const exitAfterShutdownDeadline = Effect.gen(function*() {
  const { timeout } = yield* ShutdownConfig
  const runtime = yield* Effect.runtime<never>()
  const log = (effect: Effect.Effect<void>) => Runtime.runSync(runtime)(effect)
  const arm = (signal: NodeJS.Signals) => {
    process.off("SIGTERM", arm)
    process.off("SIGINT", arm)
    log(Effect.logInfo(`${signal}: shutting down (at most ${Duration.format(timeout)})`))
    // Unreferenced: a shutdown that ends in time exits without waiting for it.
    setTimeout(() => {
      log(Effect.logError(`shutdown did not end within ${Duration.format(timeout)} (SHUTDOWN_TIMEOUT): exiting`))
      process.exit(1)
    }, Duration.toMillis(timeout)).unref()
  }
  yield* Effect.sync(() => {
    process.once("SIGTERM", arm)
    process.once("SIGINT", arm)
  })
})
