/**
 * The PostgreSQL server the benchmark runs on: DATABASE_URL when set, otherwise the embedded
 * PostgreSQL under bench/.data (started for the scope, stopped when it closes).
 */
import { Effect } from "effect"
import { startEmbeddedPostgres } from "../src/db/embedded.js"
import { DATA_DIR, type Settings } from "./settings.js"

export interface BenchServer {
  /** A URL on the server with rights to create the benchmark database. */
  readonly adminUrl: string
  readonly description: string
}

export const benchServer = (settings: Settings) =>
  Effect.gen(function*() {
    if (settings.databaseUrl) {
      const url = new URL(settings.databaseUrl)
      return { adminUrl: settings.databaseUrl, description: `DATABASE_URL (${url.hostname}:${url.port || 5432})` }
    }
    const server = yield* startEmbeddedPostgres({
      dataDir: DATA_DIR,
      port: settings.embeddedPort,
      onLog: (line) => {
        if (/FATAL|PANIC/.test(line)) console.error(`[postgres] ${line}`)
      }
    })
    return {
      adminUrl: server.url,
      description: `embedded PostgreSQL on 127.0.0.1:${server.port} (data in bench/.data/pg)`
    } satisfies BenchServer
  })
