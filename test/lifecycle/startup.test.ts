/**
 * Requests that arrive just as the port opens are answered (issue 17, defect 2): clients connect
 * over and over while the real service process starts; every connection the service accepts gets
 * its answer (a refused connection is fine: the port was not open yet). The port check before the
 * start (src/http/portCheck.ts) only connects, so nothing listens for a moment and cuts a client.
 */
import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as net from "node:net"
import { inject } from "vitest"
import { createDatabase } from "../../src/db/embedded.js"
import { spawnService, tail } from "../support/serviceProcess.js"

type Outcome = "refused" | "answered" | "unanswered"

/** One connection: refused, answered (a whole status line read), or accepted and left without an answer. */
const attempt = (port: number) =>
  new Promise<Outcome>((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    let connected = false
    let received = ""
    const timer = setTimeout(() => {
      socket.destroy()
      resolve("unanswered")
    }, 30_000)
    const done = (outcome: Outcome) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(outcome)
    }
    socket.setEncoding("utf8")
    socket.once("connect", () => {
      connected = true
      socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    })
    socket.on("data", (chunk: string) => {
      received += chunk
      if (/^HTTP\/1\.1 200 /.test(received)) done("answered")
    })
    socket.once("error", () => done(connected ? "unanswered" : "refused"))
    socket.once("close", () => done(connected ? "unanswered" : "refused"))
  })

it("answers every connection accepted while the service starts", async () => {
  const url = await Effect.runPromise(
    createDatabase(inject("adminDatabaseUrl"), `life_start_${Date.now().toString(36)}`)
  )
  const service = await spawnService(url)
  const outcomes: Array<Promise<Outcome>> = []
  let answered = 0
  // Four clients, each connecting again as soon as its last connection was refused, until 20 answers.
  await Promise.all([1, 2, 3, 4].map(async () => {
    while (answered < 20 && service.child.exitCode === null) {
      const outcome = attempt(service.port)
      outcomes.push(outcome)
      if ((await outcome) === "answered") answered++
      else await new Promise((r) => setTimeout(r, 2))
    }
  }))
  const all = await Promise.all(outcomes)
  service.child.kill("SIGTERM")
  expect(await service.exited(), tail(service.output)).toBe(0)
  expect(all.filter((o) => o === "unanswered"), tail(service.output)).toEqual([])
  expect(all.filter((o) => o === "answered").length).toBeGreaterThanOrEqual(20)
}, 240_000)
