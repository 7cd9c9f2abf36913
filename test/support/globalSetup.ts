/**
 * One PostgreSQL server for the whole run: DATABASE_URL when set (it must allow CREATE DATABASE),
 * otherwise the embedded one in a fresh temporary directory. Each test file creates its own database.
 */
import { Effect, Exit, Scope } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/db/embedded.js"

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string
  }
}

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(
        () => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")))
      )
    })
  })

/**
 * A free port outside the system's ephemeral range (32768 and up on Linux), for a service started
 * with a fixed PORT: a port from `freePort` is an ephemeral one, which another socket of the same
 * start (the cluster runner, which listens on a port of the system's choosing) can be given before
 * the service gets to listen on it.
 */
export const freeFixedPort = async (): Promise<number> => {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer()
      server.once("error", () => resolve(false))
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
    })
    if (free) return port
  }
  throw new Error("no free port between 20000 and 32000")
}

let scope: Scope.CloseableScope | undefined
let dir: string | undefined

export async function setup(project: TestProject) {
  if (process.env.DATABASE_URL) {
    project.provide("adminDatabaseUrl", process.env.DATABASE_URL)
    return
  }
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "partner-test-pg-"))
  fs.chmodSync(dir, 0o755)
  scope = await Effect.runPromise(Scope.make())
  const port = await freePort()
  const server = await Effect.runPromise(
    startEmbeddedPostgres({ dataDir: dir, port }).pipe(Scope.extend(scope))
  )
  project.provide("adminDatabaseUrl", server.url)
}

export async function teardown() {
  if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
}
