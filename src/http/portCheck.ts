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

/** Listens on `host`:`port` for a moment; fails naming `setting` when that is refused. Port 0 always passes. */
export const ensurePortFree = (setting: string, host: string, port: number) =>
  port === 0 ? Effect.void : Effect.async<void, PortUnavailable>((resume) => {
    // A client that connects in the probe's moment is cut at once rather than left waiting.
    const probe = net.createServer((socket) => socket.destroy())
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
