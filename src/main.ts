/** Entry point: `serve` (npm start) and the admin commands (npm run cli -- ...). */
import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { ServiceLive } from "./app.js"
import { adminCommands } from "./cli/commands.js"
import { ObservabilityLive } from "./observability.js"

const serve = Command.make("serve", {}, () => Layer.launch(ServiceLive))

const root = Command.make("tour-partner-service").pipe(Command.withSubcommands([serve, ...adminCommands]))

const cli = Command.run(root, { name: "tour-partner-service", version: "0.1.0" })

cli(process.argv).pipe(
  Effect.provide(ObservabilityLive),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
