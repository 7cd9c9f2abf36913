/**
 * The real service process (`node --import tsx src/main.ts serve`) on a database of the test run
 * (DATABASE_URL), on a fixed port, for tests that send it real signals (test/lifecycle/). Every
 * process started is killed after the test file if still running; its output is kept for failure
 * messages.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll } from "vitest"
import { freeFixedPort } from "./globalSetup.js"

const ROOT = path.resolve(import.meta.dirname, "../..")

export interface ServiceProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly base: string
  readonly output: () => string
  /** The exit code, once exited (SIGKILL and a failure when not within `withinMs`: a hang). */
  readonly exited: (withinMs?: number) => Promise<number | null>
}

const running: Array<ChildProcess> = []
afterAll(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
})

/** Starts the service on `databaseUrl` without waiting for it (see `ready`). */
export const spawnService = async (databaseUrl: string, env: Record<string, string> = {}): Promise<ServiceProcess> => {
  const port = await freeFixedPort()
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "serve"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      DEMO_DATA: "false",
      PORT: String(port),
      SANDBOX_PORT: "0",
      LOG_LEVEL: "info",
      EXCHANGE_RATES_NORGES_BANK_URL: "http://127.0.0.1:9",
      EXCHANGE_RATES_ECB_URL: "http://127.0.0.1:9",
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  running.push(child)
  let out = ""
  child.stdout!.on("data", (c) => (out += c))
  child.stderr!.on("data", (c) => (out += c))
  const output = () => out
  const exited = (withinMs = 60_000) =>
    new Promise<number | null>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`the service did not exit within ${withinMs / 1000} s:\n${tail(output)}`))
      }, withinMs)
      child.once("exit", (code) => {
        clearTimeout(timer)
        resolve(code)
      })
    })
  return { child, port, base: `http://127.0.0.1:${port}`, output, exited }
}

/** Resolves once GET /readyz answers 200 (fails with the output when the process exits or 180 s pass). */
export const ready = async (service: ServiceProcess) => {
  const deadline = Date.now() + 180_000
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) {
      throw new Error(`service exited ${service.child.exitCode}:\n${tail(service.output)}`)
    }
    try {
      const res = await fetch(`${service.base}/readyz`, { signal: AbortSignal.timeout(5_000) })
      await res.text()
      if (res.status === 200) return service
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  throw new Error(`service not ready within 180 s:\n${tail(service.output)}`)
}

export const startService = async (databaseUrl: string, env: Record<string, string> = {}) =>
  ready(await spawnService(databaseUrl, env))

export const tail = (output: () => string) => `--- service output (last 4000 characters) ---\n${output().slice(-4000)}`

/** One HTTP/1.1 answer read off a socket. */
export interface WireAnswer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/**
 * A keep-alive connection with exact control over what is sent when: `send` writes bytes, `answer`
 * waits for the next complete answer (Content-Length framed, as the service answers these probes).
 */
export const connection = (port: number) =>
  new Promise<{
    readonly socket: net.Socket
    readonly send: (text: string) => void
    readonly answer: (withinMs?: number) => Promise<WireAnswer>
    readonly closed: Promise<void>
  }>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    let buffer = ""
    let wake: (() => void) | undefined
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => {
      buffer += chunk
      wake?.()
    })
    const closed = new Promise<void>((r) => socket.once("close", () => r()))
    socket.on("close", () => wake?.())
    socket.on("error", () => {})
    const parse = (): WireAnswer | undefined => {
      const end = buffer.indexOf("\r\n\r\n")
      if (end < 0) return undefined
      const [statusLine, ...lines] = buffer.slice(0, end).split("\r\n")
      const headers: Record<string, string> = {}
      for (const line of lines) {
        const i = line.indexOf(":")
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
      }
      const length = Number(headers["content-length"] ?? 0)
      if (buffer.length < end + 4 + length) return undefined
      const body = buffer.slice(end + 4, end + 4 + length)
      buffer = buffer.slice(end + 4 + length)
      return { status: Number(statusLine!.split(" ")[1]), headers, body }
    }
    const answer = (withinMs = 30_000) =>
      new Promise<WireAnswer>((ok, fail) => {
        const timer = setTimeout(() => fail(new Error(`no answer within ${withinMs / 1000} s`)), withinMs)
        const attempt = () => {
          const parsed = parse()
          if (parsed) {
            clearTimeout(timer)
            wake = undefined
            ok(parsed)
          } else if (socket.destroyed || socket.readableEnded) {
            clearTimeout(timer)
            fail(new Error(`connection closed without an answer (received ${JSON.stringify(buffer)})`))
          }
        }
        wake = attempt
        attempt()
      })
    socket.once("connect", () => resolve({ socket, send: (text) => void socket.write(text), answer, closed }))
    socket.once("error", reject)
  })

/** A GET on a kept-alive connection. */
export const getRequest = (pathname: string) => `GET ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`

/** Resolves once a new connection to `port` is refused (the listener closed). */
export const listenerClosed = async (port: number, withinMs = 30_000) => {
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1")
      socket.once("connect", () => {
        socket.destroy()
        resolve(false)
      })
      socket.once("error", () => resolve(true))
    })
    if (refused) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`port ${port} still accepts connections after ${withinMs / 1000} s`)
}
