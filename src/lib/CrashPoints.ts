/**
 * Fault injection for crash-safety tests: a multi-step write calls `reached(step)` between its side
 * effects; with `CRASH_AT` naming that step the write stops there as a crash would.
 *
 * - `CRASH_AT`: comma-separated step names (e.g. `cancel.after_release`); unset in production, where
 *   `reached` does nothing.
 * - `CRASH_MODE`: `die` (default: the request fails with a defect and nothing after the step runs,
 *   the way tests in one process simulate a crash) or `kill` (the process kills itself with SIGKILL,
 *   for tests that restart the service on the same database).
 *
 * Steps are listed where they are reached (src/partner/cancels/Cancels.ts, CancelRefunds.ts, CancelRecovery.ts;
 * src/partner/reschedules/Reschedules.ts) and in docs/decisions.md.
 */
import { Config, Effect } from "effect"

export class CrashPoints extends Effect.Service<CrashPoints>()("Lib/CrashPoints", {
  effect: Effect.gen(function*() {
    const at = yield* Config.string("CRASH_AT").pipe(Config.withDefault(""), Effect.orDie)
    const mode = yield* Config.literal("die", "kill")("CRASH_MODE").pipe(
      Config.withDefault("die" as const),
      Effect.orDie
    )
    const steps = new Set(at.split(",").map((s) => s.trim()).filter((s) => s !== ""))

    // No span: a write reaches a dozen steps, and a span each would only repeat its own spans.
    const reached = (step: string): Effect.Effect<void> =>
      !steps.has(step)
        ? Effect.void
        : mode === "kill"
        ? Effect.sync(() => process.kill(process.pid, "SIGKILL"))
        : Effect.dieMessage(`crash injected at ${step} (CRASH_AT)`)

    return { reached } as const
  })
}) {}
