/**
 * Paired measurement of the fixed cost per request (bench/README.md, "Issue 18: the framework's
 * overhead"): Node CPU per request of the service at a baseline (`PAIR_BASE`, an entry point of a
 * copy of the service, e.g. the previous commit's `src` copied under bench/.data/base), of the service
 * as it is (src/main.ts) and of the floor, started side by side on the bench database and loaded in
 * turn, path by path, round by round, so each round of each server sees about the same machine.
 * Node CPU from /proc (bench/cpu.ts); the requests are the bench's own (`npm run bench`'s booking
 * detail, first page, and `/healthz`, which runs no SQL: the framework's cost alone).
 *
 *   BENCH_PG_PORT=48701 PAIR_BASE=bench/.data/base/src/main.ts npx tsx bench/pair.ts
 *
 * PAIR_TARGETS (`before,after,floor`: which servers; `before` needs PAIR_BASE), PAIR_PATHS
 * (`healthz,get,list`), PAIR_ROUNDS (3), PAIR_REQUESTS (6000 per round), PAIR_CONNECTIONS (8).
 * BENCH_NODE_FLAGS applies (e.g. `--cpu-prof`). Prints each round and the min–median per server.
 */
import { NodeRuntime } from "@effect/platform-node"
import autocannon from "autocannon"
import { Effect } from "effect"
import * as path from "node:path"
import pg from "pg"
import { startChild } from "./children.js"
import { cpuSeconds } from "./cpu.js"
import { ensureDataset } from "./generate.js"
import { benchServer } from "./server.js"
import { DATA_DIR, readSettings } from "./settings.js"

const ROUNDS = Number(process.env.PAIR_ROUNDS ?? 3)
const REQUESTS = Number(process.env.PAIR_REQUESTS ?? 6000)
const CONNECTIONS = Number(process.env.PAIR_CONNECTIONS ?? 8)
const BASE = process.env.PAIR_BASE
const TARGETS = (process.env.PAIR_TARGETS ?? (BASE ? "before,after,floor" : "after,floor")).split(",")
const PATHS = (process.env.PAIR_PATHS ?? "healthz,get,list").split(",")

/** `REQUESTS` requests over `paths` in turn; the number not answered 2xx. */
const load = (base: string, paths: ReadonlyArray<string>, token: string) =>
  Effect.promise(async () => {
    let i = 0
    const result = await autocannon({
      url: base,
      connections: CONNECTIONS,
      amount: REQUESTS,
      headers: { authorization: `Bearer ${token}` },
      requests: [{ setupRequest: (request) => ({ ...request, path: paths[i++ % paths.length]! }) }]
    })
    return result.non2xx
  })

const main = Effect.gen(function*() {
  const settings = readSettings([])
  const server = yield* benchServer(settings)
  const dataset = yield* ensureDataset(server.adminUrl, settings)
  const key = dataset.singleKey
  // The booking detail scenario's 1,000 bookings (bench/run.ts).
  const ids = yield* Effect.acquireUseRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: dataset.url })
      await client.connect()
      return client
    }),
    (client) =>
      Effect.promise(() =>
        client.query<{ id: string }>(
          `SELECT id FROM bookings
           WHERE operator_id = $1 AND status IN ('RESERVED', 'CONFIRMED', 'CANCELLED', 'REFUNDED')
           ORDER BY md5(id::text) LIMIT 1000`,
          [key.operatorIds[0]]
        ).then((r) => r.rows.map((row) => row.id))
      ),
    (client) => Effect.promise(() => client.end())
  )
  const common = {
    DATABASE_URL: dataset.url,
    DB_POOL_SIZE: String(settings.poolSize),
    RATE_LIMIT_PER_MINUTE: "1000000000"
  }
  const serviceEnv = {
    ...common,
    DEMO_DATA: "false",
    JOBS: "false",
    LOG_LEVEL: "Warning",
    DATA_DIR: path.join(DATA_DIR, "service")
  }
  const targets: Array<{ readonly name: string; readonly base: string; readonly pid: number }> = []
  for (const name of TARGETS) {
    if (name === "before" && !BASE) return yield* Effect.fail(new Error("PAIR_BASE is needed for `before`"))
    const started = yield* startChild({
      name: `pair-${name}`,
      args: name === "floor" ? ["bench/floor.ts"] : [name === "before" ? BASE! : "src/main.ts", "serve"],
      env: name === "floor" ? common : serviceEnv,
      readyPath: "/healthz"
    })
    targets.push({ name, base: started.base, pid: started.child.pid! })
  }
  const paths: Record<string, ReadonlyArray<string>> = {
    healthz: ["/healthz"],
    get: ids.map((id) => `/api/v1/bookings/${id}`),
    list: ["/api/v1/bookings?limit=50"]
  }
  // One round unmeasured: JIT and caches warm on every server and path.
  for (const p of PATHS) for (const t of targets) yield* load(t.base, paths[p]!, key.token)
  const results = new Map<string, Array<number>>()
  for (let round = 1; round <= ROUNDS; round++) {
    for (const p of PATHS) {
      for (const t of targets) {
        const before = cpuSeconds(t.pid)!
        const refused = yield* load(t.base, paths[p]!, key.token)
        const ms = (cpuSeconds(t.pid)! - before) * 1000 / REQUESTS
        results.set(`${p} ${t.name}`, [...(results.get(`${p} ${t.name}`) ?? []), ms])
        console.log(`round ${round} ${p} ${t.name}: ${ms.toFixed(3)} ms/req${refused ? ` (${refused} not 2xx!)` : ""}`)
      }
    }
  }
  for (const p of PATHS) {
    const row = targets.map((t) => {
      const sorted = [...results.get(`${p} ${t.name}`)!].sort((a, b) => a - b)
      return `${t.name} ${sorted[0]!.toFixed(3)}–${sorted[Math.floor(sorted.length / 2)]!.toFixed(3)}`
    })
    console.log(`${p}: ${row.join(" | ")} (Node CPU ms per request, min–median of ${ROUNDS} rounds)`)
  }
})

NodeRuntime.runMain(Effect.scoped(main))
