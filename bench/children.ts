/**
 * Child processes of the benchmarks (the servers under test, the sandbox booking system): started
 * with tsx (a JavaScript script such as the production bundle `dist/main.js` without it, its
 * TypeScript preloads compiled first), logging to bench/.data/logs, waited for until they answer, and stopped when the scope
 * closes (SIGTERM, then SIGKILL after 10 s). Their stdin is a pipe held by the runner, so a child
 * that watches it exits with the runner.
 */
import { Effect } from "effect"
import * as esbuild from "esbuild"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { DATA_DIR, PROJECT_DIR } from "./settings.js"

/**
 * V8 flags every child (service, floor, sandboxes) runs with: the ones `npm start` gives the service
 * (package.json), so that the service is measured as it runs and the floor on the same runtime.
 * `--max-semi-space-size=64`: a young generation of 64 MiB semi-spaces instead of 16 (bench/README.md,
 * "Garbage collection"). BENCH_NODE_FLAGS replaces them ("" for none).
 */
export const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? "--max-semi-space-size=64").split(/\s+/).filter((f) =>
  f !== ""
)

export const LOG_DIR = path.join(DATA_DIR, "logs")

/**
 * The node arguments that load `preloads` before `script`: under tsx for a TypeScript script; for a
 * JavaScript one (the production bundle, run as the Dockerfile runs it, so that its memory is
 * measured without tsx), each preload compiled to LOG_DIR/preload/<name>.mjs and tsx not loaded.
 */
const loaderArgs = (script: string, preloads: ReadonlyArray<string>) => {
  if (!script.endsWith(".js")) return ["--import", "tsx", ...preloads.flatMap((file) => ["--import", file])]
  return preloads.flatMap((file) => {
    const outfile = path.join(LOG_DIR, "preload", path.basename(file).replace(/\.ts$/, ".mjs"))
    esbuild.buildSync({
      entryPoints: [path.join(PROJECT_DIR, file)],
      outfile,
      format: "esm",
      platform: "node",
      target: "node20",
      logLevel: "error"
    })
    return ["--import", outfile]
  })
}

export const step = (line: string) => Effect.sync(() => console.log(`[bench] ${line}`))

export const freePort = () =>
  Effect.async<number, Error>((resume) => {
    const server = net.createServer()
    server.once("error", (e) => resume(Effect.fail(e)))
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo
      server.close(() => resume(Effect.succeed(address.port)))
    })
  })

export const tail = (file: string) => {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-15).join("\n")
  } catch {
    return ""
  }
}

export const stopChild = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

export interface Child {
  readonly child: ChildProcess
  /** http://127.0.0.1:<port> */
  readonly base: string
  readonly logFile: string
}

/**
 * Starts `node --import tsx [preloads] <args>` (./loaderArgs: a JavaScript script without tsx) with PORT and HOST set (stopped when the scope
 * closes) and waits until GET `readyPath` answers 200.
 */
export const startChild = (options: {
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
  readonly readyPath: string
  readonly preload?: ReadonlyArray<string>
}) =>
  Effect.gen(function*() {
    const { name } = options
    const port = yield* freePort()
    fs.mkdirSync(LOG_DIR, { recursive: true })
    const logFile = path.join(LOG_DIR, `${name}.log`)
    const childEnv: Record<string, string | undefined> = {
      ...process.env,
      ...options.env,
      PORT: String(port),
      HOST: "127.0.0.1"
    }
    delete childEnv.OTEL_EXPORTER_OTLP_ENDPOINT
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const out = fs.openSync(logFile, "w")
        const loaders = loaderArgs(options.args[0] ?? "", options.preload ?? [])
        const proc = spawn(process.execPath, [...NODE_FLAGS, ...loaders, ...options.args], {
          cwd: PROJECT_DIR,
          env: childEnv,
          stdio: ["pipe", out, out]
        })
        fs.closeSync(out)
        proc.stdin?.on("error", () => {})
        return proc
      }),
      (proc) => stopChild(proc).pipe(Effect.zipRight(step(`${name} stopped`)))
    )
    const base = `http://127.0.0.1:${port}`
    const deadline = Date.now() + 120_000
    while (true) {
      if (child.exitCode !== null) {
        return yield* Effect.fail(new Error(`${name} exited with code ${child.exitCode}:\n${tail(logFile)}`))
      }
      // Each try bounded: a request that reaches the port after the server listens but before it
      // has its request handler is never answered (seen on a busy machine), so try again.
      const ready = yield* Effect.promise(() =>
        // A time limit: a connection accepted while the child was starting may never be answered.
        fetch(`${base}${options.readyPath}`, { signal: AbortSignal.timeout(2_000) }).then(
          (r) => r.status === 200,
          () => false
        )
      )
      if (ready) break
      if (Date.now() > deadline) {
        return yield* Effect.fail(new Error(`${name} did not answer ${options.readyPath} in 120 s:\n${tail(logFile)}`))
      }
      yield* Effect.sleep("250 millis")
    }
    yield* step(`${name} ready on ${base} (pid ${child.pid}, log ${path.relative(PROJECT_DIR, logFile)})`)
    return { child, base, logFile } satisfies Child
  })

/**
 * The service as the read benchmarks run it (no demo data, no jobs, warnings only; its SQL trace and
 * HTTP timing records) and their floor on the same settings (its SQL trace), named `<prefix>-service`
 * and `<prefix>-floor`.
 */
export const startServiceAndFloor = (options: {
  readonly prefix: string
  readonly serviceEntry: string
  readonly floorEntry: string
  /** Settings of both (database, pool, ...). */
  readonly env: Record<string, string>
  readonly traces: { readonly service: string; readonly floor: string }
  readonly serviceTiming: string
}) =>
  Effect.all({
    service: startChild({
      name: `${options.prefix}-service`,
      args: [options.serviceEntry, "serve"],
      env: {
        ...options.env,
        DEMO_DATA: "false",
        JOBS: "false",
        LOG_LEVEL: "Warning",
        DATA_DIR: path.join(DATA_DIR, "service"),
        BENCH_SQL_TRACE: options.traces.service,
        BENCH_HTTP_TIMING: options.serviceTiming
      },
      readyPath: "/healthz",
      preload: ["./bench/sqlTrace.ts", "./bench/httpTiming.ts"]
    }),
    floor: startChild({
      name: `${options.prefix}-floor`,
      args: [options.floorEntry],
      env: { ...options.env, BENCH_SQL_TRACE: options.traces.floor },
      readyPath: "/healthz",
      preload: ["./bench/sqlTrace.ts"]
    })
  })

/**
 * startServiceAndFloor on database `url` with the read benchmarks' settings (pool of
 * BENCH_POOL_SIZE, rate limit out of the way), their SQL traces `<prefix>-service.sql.jsonl` and
 * `<prefix>-floor.sql.jsonl` in LOG_DIR started empty.
 */
export const startTracedServiceAndFloor = (
  prefix: string,
  settings: { readonly serviceEntry: string; readonly poolSize: number },
  url: string
) =>
  Effect.gen(function*() {
    const traces = {
      service: path.join(LOG_DIR, `${prefix}-service.sql.jsonl`),
      floor: path.join(LOG_DIR, `${prefix}-floor.sql.jsonl`)
    }
    fs.mkdirSync(LOG_DIR, { recursive: true })
    for (const file of Object.values(traces)) fs.writeFileSync(file, "")
    const started = yield* startServiceAndFloor({
      prefix,
      serviceEntry: settings.serviceEntry,
      floorEntry: "bench/floor.ts",
      env: { DATABASE_URL: url, DB_POOL_SIZE: String(settings.poolSize), RATE_LIMIT_PER_MINUTE: "1000000000" },
      traces,
      serviceTiming: path.join(LOG_DIR, `${prefix}-service.http.jsonl`)
    })
    return { ...started, traces }
  })

/** The machine a run measured on, for the results file. */
export const machine = () => {
  const cpus = os.cpus()
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30 * 10) / 10,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version
  }
}
