/**
 * The job runner's port (CLUSTER_PORT). Unset, each instance listens on a free port the system
 * picks and registers that port in the cluster's storage: a second `npm start` on the same machine
 * starts while another instance holds the old default port 34431, and two instances without the
 * setting find each other. Set to a port in use, the start fails with an error naming CLUSTER_PORT.
 */
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Context, Effect, Exit, Layer, Option, Scope } from "effect"
import * as net from "node:net"
import { layerFromUrl } from "../../src/db/Database.js"
import { jobsInstance } from "../support/jobs.js"
import { freshDatabase } from "../support/server.js"

/** Holds `port` on 127.0.0.1 for the scope, as another instance would; already held by someone else is as good. */
const holdPort = (port: number) =>
  Effect.acquireRelease(
    Effect.async<net.Server | undefined>((resume) => {
      const server = net.createServer()
      server.once("error", (e: NodeJS.ErrnoException) =>
        e.code === "EADDRINUSE" ? resume(Effect.succeed(undefined)) : resume(Effect.die(e)))
      server.listen(port, "127.0.0.1", () =>
        resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        if (server) server.close(() => resume(Effect.void))
        else resume(Effect.void)
      })
  )

/** A TCP port of 127.0.0.1 accepts connections. */
const accepts = (port: number) =>
  Effect.async<boolean>((resume) => {
    const socket = net.connect(port, "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(true))
    })
    socket.once("error", () => resume(Effect.succeed(false)))
  })

const instance = (url: string, port: number | undefined) => jobsInstance(url, port, {})

layer(Layer.empty, { excludeTestServices: true, timeout: 120_000 })("the job runner's port", (it) => {
  it.scoped("unset: a free port, while another instance holds 34431; two such instances register apart", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const sql = Context.get(yield* Layer.build(layerFromUrl(url, 2)), SqlClient.SqlClient)
      yield* holdPort(34431)

      const instances = yield* Scope.make()
      yield* Layer.buildWithScope(instance(url, undefined), instances)
      yield* Layer.buildWithScope(instance(url, undefined), instances)

      // Both runners registered, each with the port it listens on, none on the held one.
      const registered = sql<{ address: string }>`SELECT address FROM cluster_runners ORDER BY address`
      let runners = yield* registered
      for (let i = 0; i < 50 && runners.length < 2; i++) {
        runners = yield* Effect.zipRight(Effect.sleep("200 millis"), registered)
      }
      expect(runners.length, JSON.stringify(runners)).toBe(2)
      const ports = runners.map((r) => Number(r.address.split(":").at(-1)))
      expect(new Set(ports).size).toBe(2)
      for (const port of ports) {
        expect(port).not.toBe(34431)
        expect(yield* accepts(port), `runner port ${port}`).toBe(true)
      }
      yield* Scope.close(instances, Exit.void)
    }))

  it.scoped("set to a port in use: the start fails naming CLUSTER_PORT", () =>
    Effect.gen(function*() {
      const url = yield* freshDatabase
      const taken = yield* Effect.async<net.Server>((resume) => {
        const server = net.createServer()
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      })
      yield* Effect.addFinalizer(() =>
        Effect.async<void>((resume) => {
          taken.close(() => resume(Effect.void))
        })
      )
      const port = (taken.address() as net.AddressInfo).port

      const exit = yield* Effect.exit(Layer.build(instance(url, port)))
      expect(Exit.isFailure(exit)).toBe(true)
      const failure = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : Option.none()
      expect(Option.isSome(failure), Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toBe(true)
      const error = Option.getOrThrow(failure) as { _tag: string; message: string }
      expect(error._tag).toBe("ClusterPortUnavailable")
      expect(error.message).toContain(`CLUSTER_PORT ${port}`)
      expect(error.message).toContain("in use")
    }))
})
