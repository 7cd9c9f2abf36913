/**
 * CLI for the API contracts: `openapi write <dir>` writes the two documents the service serves
 * (partner.json: /api/v1/openapi.json, quickbook.json: /api/quickbook/v1/openapi.json) into a folder,
 * without a database or a server; `npm run lint:openapi` lints what it writes.
 */
import { Args, Command } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Console, Effect } from "effect"

const write = Command.make(
  "write",
  { dir: Args.directory({ name: "dir", exists: "either" }) },
  ({ dir }) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { partnerOpenApi } = yield* Effect.promise(() => import("../partner/openapi.js"))
      const { quickbookOpenApi } = yield* Effect.promise(() => import("../quickbook/openapi.js"))
      yield* fs.makeDirectory(dir, { recursive: true })
      for (
        const [name, document] of [["partner.json", partnerOpenApi()], ["quickbook.json", quickbookOpenApi()]] as const
      ) {
        const file = path.join(dir, name)
        yield* fs.writeFileString(file, `${JSON.stringify(document, null, 2)}\n`)
        yield* Console.log(file)
      }
    })
).pipe(Command.withDescription("write the partner and quickbook OpenAPI documents (as served) into a folder"))

export const openapi = Command.make("openapi").pipe(
  Command.withDescription("the OpenAPI documents"),
  Command.withSubcommands([write])
)
