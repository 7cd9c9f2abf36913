/**
 * Entry point: `serve` (npm start) and the admin commands (npm run cli -- ...).
 *
 * The running service (src/app.ts: HTTP, jobs, cluster, sandboxes, PDF, SMTP …) is loaded only by
 * `serve`, so an admin command loads the modules it needs and no more. An admin command prints its
 * result on stdout and logs on stderr (`npm run cli -- keys list | jq` works); the service logs on
 * stdout.
 */
import { Command } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Layer } from "effect"
import { adminCommands } from "./cli/commands.js"
import { exitAfterShutdownDeadline } from "./http/lifecycle/shutdownDeadline.js"
import { LoggingLive, ObservabilityForCli } from "./observability.js"

const serve = Command.make("serve", {}, () =>
  exitAfterShutdownDeadline.pipe(
    Effect.zipRight(Effect.promise(() => import("./app.js"))),
    Effect.flatMap(({ ServiceLive }) => Layer.launch(ServiceLive)),
    Effect.provide(LoggingLive)
  ))

const root = Command.make("tour-partner-service").pipe(Command.withSubcommands([serve, ...adminCommands]))

const cli = Command.run(root, { name: "tour-partner-service", version: "0.1.0" })

cli(process.argv).pipe(
  // A failure is reported here, through the logger of LOG_FORMAT on stderr (runMain's own report
  // would print it pretty on stdout).
  Effect.tapErrorCause((cause) => Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError(cause)),
  Effect.provide(ObservabilityForCli),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
