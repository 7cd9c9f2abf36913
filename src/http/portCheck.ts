/**
 * Whether a port the service is told to listen on is free, checked before anything starts, so that
 * a second instance on one machine stops at once with a message naming the setting to change (the
 * HTTP server's own listen comes late, after the demo's setup).
 *
 * The check connects to the port rather than listening on it for a moment: a probe that listens
 * accepts clients early enough to connect and then cuts them when it closes (a client takes that
 * for a server that took its request and died). A connection that is refused means nobody listens;
 * a port bound some other way is still caught by the real listen, whose EADDRINUSE is turned into
 * the same `PortUnavailable` by `listenFailure`.
 */
import { Effect, Schema } from "effect"
import * as net from "node:net"

/** A port setting (PORT, SANDBOX_PORT …) names a port this machine cannot listen on. */
export class PortUnavailable extends Schema.TaggedError<PortUnavailable>()("PortUnavailable", {
  message: Schema.String
}) {}

/** The error for a listen on `host`:`port` (named by `setting`) that failed with `code`. */
export const listenFailure = (setting: string, host: string, port: number, code: string | undefined) =>
  new PortUnavailable({
    message: code === "EADDRINUSE"
      ? `${setting} ${port} on ${host} is in use (another instance of this service?): set ${setting} to a free port`
      : `cannot listen on ${host}:${port} (${setting}): ${code ?? "unknown error"}`
  })

/** Where to connect to reach a server listening on `host`: the wildcard addresses answer on loopback. */
const reachable = (host: string) => host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" ? "::1" : host

/** How long the check waits for the connection before taking the port for free. */
const CHECK_TIMEOUT_MS = 2_000

/** Fails naming `setting` when something already listens on `host`:`port`. Port 0 always passes. */
export const ensurePortFree = (setting: string, host: string, port: number) =>
  port === 0 ? Effect.void : Effect.async<void, PortUnavailable>((resume) => {
    const socket = net.connect({ host: reachable(host), port })
    let settled = false
    const settle = (inUse: boolean) => {
      if (settled) return
      settled = true
      socket.destroy()
      resume(inUse ? Effect.fail(listenFailure(setting, host, port, "EADDRINUSE")) : Effect.void)
    }
    socket.setTimeout(CHECK_TIMEOUT_MS, () => settle(false))
    socket.once("connect", () => settle(true))
    socket.once("error", () => settle(false))
    return Effect.sync(() => socket.destroy())
  })
