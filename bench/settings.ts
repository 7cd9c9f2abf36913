/** Benchmark knobs, read once from the environment (documented in bench/README.md). */
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url))
export const PROJECT_DIR = path.resolve(BENCH_DIR, "..")
export const DATA_DIR = path.join(BENCH_DIR, ".data")
/** application_name of the sandbox booking system's PostgreSQL connections (bench/sandbox.ts). */
export const SANDBOX_APPLICATION_NAME = "bench-sandbox"
/** bench/changes.ts: application_name of each sandbox's PostgreSQL connections. */
export const BOKUN_SANDBOX_APPLICATION_NAME = "bench-sandbox-bokun"
export const SURFBOARD_SANDBOX_APPLICATION_NAME = "bench-sandbox-surfboard"

const int = (name: string, fallback: number, min = 1) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number >= ${min} (got ${raw})`)
  return value
}

/** A comma-separated list of whole numbers >= 1. */
const intList = (name: string, fallback: ReadonlyArray<number>) => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const values = raw.split(",").map((s) => s.trim()).filter((s) => s !== "").map(Number)
  if (values.length === 0 || values.some((v) => !Number.isInteger(v) || v < 1)) {
    throw new Error(`${name} must be comma-separated whole numbers >= 1 (got ${raw})`)
  }
  return values
}

const flag = (name: string) => /^(1|true|yes|on)$/i.test(process.env[name] ?? "")

export interface Settings {
  /** A PostgreSQL server to use instead of the embedded one (any database on it; the bench creates its own). */
  readonly databaseUrl: string | undefined
  /** Name of the benchmark database created on that server. */
  readonly databaseName: string
  /** Port of the embedded PostgreSQL (differs from the service's default 54329 so both can run). */
  readonly embeddedPort: number
  readonly bookings: number
  readonly operators: number
  readonly regenerate: boolean
  /** Seconds of measurement per scenario and server. */
  readonly duration: number
  /** Seconds of warmup (discarded) before each measurement. */
  readonly warmup: number
  readonly connections: number
  /** Pool size of both servers (the service's DB_POOL_SIZE). */
  readonly poolSize: number
  /** Only the scenarios whose names contain one of these (comma separated); all when empty. */
  readonly only: ReadonlyArray<string>
  /** Exit non-zero when a target is missed (errors always exit non-zero). */
  readonly strict: boolean
  /** How many times a scenario measured while other processes were busy is measured again. */
  readonly noisyRetries: number
  /** Seconds to wait for a busy machine to settle before each scenario. */
  readonly quietTimeout: number
  /** The service's entry point, relative to the project (to measure a modified copy against the floor). */
  readonly serviceEntry: string
  /** Where the run's results go (bench/results.json; another file keeps a supplementary run apart). */
  readonly resultsFile: string
  /** `npm run bench`: the open-loop phase after the closed-loop runs (bench/openLoop.ts). */
  readonly openLoop: {
    /** BENCH_OPEN_LOOP=0 skips it. */
    readonly enabled: boolean
    /** Sockets the generator may open per run (requests beyond them wait, and that counts). */
    readonly connections: number
  }
  /** bench/mirror.ts: booking lines in the sandbox, the database it rebuilds, its results file. */
  readonly mirror: {
    readonly lines: number
    readonly databaseName: string
    readonly resultsFile: string
  }
  /** bench/changes.ts: the cancel and reschedule writes against the sandboxes. */
  readonly changes: {
    readonly databaseName: string
    /** Bookings prepared for cancels (each is cancelled once; warmups and measurements use them up). */
    readonly cancels: number
    /** Bookings the reschedules cycle through (each moves back and forth between two start times). */
    readonly reschedules: number
    /** Connection counts, each measured for every scenario. */
    readonly connections: ReadonlyArray<number>
    readonly resultsFile: string
  }
}

export const readSettings = (argv: ReadonlyArray<string> = process.argv.slice(2)): Settings => ({
  databaseUrl: process.env.DATABASE_URL || undefined,
  databaseName: process.env.BENCH_DB || "partner_bench",
  embeddedPort: int("BENCH_PG_PORT", 54339),
  bookings: int("BENCH_BOOKINGS", 1_000_000),
  operators: int("BENCH_OPERATORS", 100, 3),
  regenerate: flag("BENCH_REGENERATE") || argv.includes("--regenerate"),
  duration: int("BENCH_DURATION", 10),
  warmup: int("BENCH_WARMUP", 3, 0),
  connections: int("BENCH_CONNECTIONS", 32),
  poolSize: int("BENCH_POOL_SIZE", 10),
  only: (process.env.BENCH_SCENARIOS ?? "").split(",").map((s) => s.trim()).filter((s) => s !== ""),
  strict: flag("BENCH_STRICT"),
  noisyRetries: int("BENCH_NOISY_RETRIES", 2, 0),
  quietTimeout: int("BENCH_QUIET_TIMEOUT", 60, 0),
  serviceEntry: process.env.BENCH_SERVICE_ENTRY || "src/main.ts",
  resultsFile: path.resolve(PROJECT_DIR, process.env.BENCH_RESULTS || path.join(BENCH_DIR, "results.json")),
  openLoop: {
    enabled: !/^(0|false|no|off)$/i.test(process.env.BENCH_OPEN_LOOP ?? ""),
    connections: int("BENCH_OPEN_LOOP_CONNECTIONS", 256)
  },
  mirror: {
    lines: int("BENCH_MIRROR_LINES", 100_000, 100),
    databaseName: process.env.BENCH_MIRROR_DB || "partner_bench_mirror",
    resultsFile: path.resolve(
      PROJECT_DIR,
      process.env.BENCH_MIRROR_RESULTS || path.join(BENCH_DIR, "mirror-results.json")
    )
  },
  changes: {
    databaseName: process.env.BENCH_CHANGES_DB || "partner_bench_changes",
    cancels: int("BENCH_CHANGES_CANCELS", 3_000, 10),
    reschedules: int("BENCH_CHANGES_RESCHEDULES", 500, 10),
    connections: intList("BENCH_CHANGES_CONNECTIONS", [1, 8]),
    resultsFile: path.resolve(
      PROJECT_DIR,
      process.env.BENCH_CHANGES_RESULTS || path.join(BENCH_DIR, "changes-results.json")
    )
  }
})

/** The URL of database `name` on the server behind `serverUrl`. */
export const databaseUrlFor = (serverUrl: string, name: string) => {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}
