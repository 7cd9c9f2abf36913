/**
 * Whether a port the service is told to listen on is free, checked before anything starts, so that
 * a second instance on one machine stops at once with a message naming the setting to change (the
 * HTTP server's own listen failed late, after the demo's setup, with a bare EADDRINUSE).
 */
import { Effect, Schema } from "effect"
import * as net from "node:net"

/** A port setting (PORT, SANDBOX_PORT …) names a port this machine cannot listen on. */
export class PortUnavailable extends Schema.TaggedError<PortUnavailable>()("PortUnavailable", {
  message: Schema.String
}) {}

/** The probe's answer to a client early enough to connect to it: the service is not listening yet. */
const NOT_YET = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain\r\n" +
  "Content-Length: 25\r\nConnection: close\r\n\r\nThe service is starting.\n"

/** Listens on `host`:`port` for a moment; fails naming `setting` when that is refused. Port 0 always passes. */
export const ensurePortFree = (setting: string, host: string, port: number) =>
  port === 0 ? Effect.void : Effect.async<void, PortUnavailable>((resume) => {
    // A client that connects in the probe's moment is told to come back (503, Retry-After), not cut
    // without a word (a client would take that for a server that accepted its request and died).
    const probe = net.createServer((socket) => {
      socket.on("error", () => undefined)
      socket.end(NOT_YET)
    })
    probe.once("error", (e: NodeJS.ErrnoException) =>
      resume(Effect.fail(
        new PortUnavailable({
          message: e.code === "EADDRINUSE"
            ? `${setting} ${port} on ${host} is in use (another instance of this service?): set ${setting} to a free port`
            : `cannot listen on ${host}:${port} (${setting}): ${e.code ?? e.message}`
        })
      )))
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resume(Effect.void)))
  })
