/** The database as the CLI opens it: embedded or DATABASE_URL, migrations applied, a small pool. */
import { Effect, Layer } from "effect"
import { DatabaseUrl, layerFromUrl } from "../db/Database.js"

export const DatabaseForCli = Layer.unwrapScoped(Effect.map(DatabaseUrl, (url) => layerFromUrl(url, 2)))
