/**
 * Preloaded (`node --import tsx --import ./bench/sqlTrace.ts`) into the service and the floor so
 * the runner can check that both send PostgreSQL the same statements. Every query text and its
 * parameters are appended to the file named by BENCH_SQL_TRACE, one JSON line each, until the
 * process receives SIGUSR2: then the original `pg` method is put back and tracing costs nothing
 * during the measurements. Both servers load `pg` from the same node_modules, so patching the
 * prototype here reaches the pool inside @effect/sql-pg as well as the floor's.
 */
import { appendFileSync } from "node:fs"
import { createRequire } from "node:module"

const file = process.env.BENCH_SQL_TRACE

if (file) {
  const require = createRequire(import.meta.url)
  const pg = require("pg") as { Client: { prototype: { query: (...args: Array<any>) => unknown } } }
  const original = pg.Client.prototype.query
  pg.Client.prototype.query = function(this: unknown, ...args: Array<any>) {
    const [config, values] = args
    const text = typeof config === "string" ? config : config?.text
    const params = typeof config === "object" && config !== null && Array.isArray(config.values)
      ? config.values
      : Array.isArray(values)
      ? values
      : []
    if (typeof text === "string") {
      appendFileSync(file, JSON.stringify({ text, values: params }) + "\n")
    }
    return original.apply(this, args)
  }
  process.on("SIGUSR2", () => {
    pg.Client.prototype.query = original
  })
}
