/**
 * The service's node:http server, with the two things @effect/platform-node's `NodeHttpServer.layer`
 * does not do (issue 17, defects 1 and 2):
 *
 * - **Start**: the stock layer listens first and attaches the request handler only when the HTTP
 *   app is built (src/Http.ts builds the APIs after the server exists, since their URLs need its
 *   port), and a request arriving in between is accepted by node and never answered. Here the server
 *   has one request listener from the start; requests that arrive before the app is ready wait for
 *   it and are then served.
 * - **Stop**: the stock layer removes the request handler when the app's scope closes and then
 *   calls `server.close()`, which stops listening but leaves the keep-alive sockets of requests in
 *   flight open: a request sent on one of them afterwards reaches no handler and is never answered.
 *   Here the end of the app's scope drains instead: `Readiness.draining()` turns true (GET /readyz
 *   answers 503), the listener closes (new connections are refused), and every request already
 *   accepted or arriving on an open socket is served to its end with `Connection: close`, so each
 *   socket closes after its answer; keep-alive sockets still idle after IDLE_GRACE_MS are closed. The scope closes once every
 *   socket is closed and every request's fiber has ended (a request runs to its end even when its
 *   client left: src/http/apiApp.ts); the jobs and the database close after that (src/app.ts). The
 *   whole shutdown is bounded by SHUTDOWN_TIMEOUT (./shutdownDeadline.ts).
 *
 * Node's header, request and keep-alive timeouts come from HttpServerConfig (src/config.ts).
 */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import * as net from "node:net"
import { listenFailure, type PortUnavailable } from "../portCheck.js"
import { HttpServerConfig } from "./config.js"
import { oversizedHeadResponse, rawHttp } from "./oversizedHead.js"
import { Readiness } from "./Readiness.js"

/**
 * How long a keep-alive socket idle when the shutdown begins stays open: a request sent on it meanwhile
 * is served (with `Connection: close`) rather than cut by a close it crossed on the wire.
 */
export const IDLE_GRACE_MS = 2_000

/** Node's bare answers to the other requests its parser refuses. */
const NODE_ANSWERS: Record<string, string> = {
  HPE_CHUNK_EXTENSIONS_OVERFLOW: "413 Payload Too Large",
  ERR_HTTP_REQUEST_TIMEOUT: "408 Request Timeout"
}

type Handler = (request: IncomingMessage, response: ServerResponse) => void

const make = (host: string, port: number) =>
  Effect.gen(function*() {
    const config = yield* HttpServerConfig
    const server = createServer({
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs
    })
    let handler: Handler | undefined
    let draining = false
    const waiting: Array<[IncomingMessage, ServerResponse]> = []
    /** Requests whose fiber has not ended, and what to call when there are none. */
    let running = 0
    let onIdle: (() => void) | undefined

    /** Answers not finished yet. */
    const open = new Set<ServerResponse>()
    /** Per connection, how many of its requests are not answered yet (pipelined requests queue up). */
    const answering = new Map<net.Socket, number>()

    // What node does without a listener (lib/_http_server.js socketOnError), except that a request
    // head over its limit gets the API's own 400 (./oversizedHead.ts) instead of a bare 431, and that
    // node answers only a connection's first request (bytesWritten 0), dropping a later one on a
    // keep-alive connection unanswered: here any is answered while no answer is being written on it.
    server.on("clientError", (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: net.Socket) => {
      if (socket.writable && !answering.has(socket)) {
        socket.write(
          error.code === "HPE_HEADER_OVERFLOW"
            ? rawHttp(oversizedHeadResponse(error.rawPacket?.subarray(0, 64).toString("latin1") ?? ""))
            : `HTTP/1.1 ${NODE_ANSWERS[error.code ?? ""] ?? "400 Bad Request"}\r\nConnection: close\r\n\r\n`
        )
      }
      socket.destroy(error)
    })

    server.on("request", (request: IncomingMessage, response: ServerResponse) => {
      open.add(response)
      const socket = request.socket
      answering.set(socket, (answering.get(socket) ?? 0) + 1)
      response.once("close", () => {
        open.delete(response)
        const left = (answering.get(socket) ?? 1) - 1
        if (left > 0) answering.set(socket, left)
        else answering.delete(socket)
      })
      // A socket whose answer ends while draining is closed as soon as it is idle.
      response.once("finish", () => {
        if (draining) setImmediate(() => onIdle?.())
      })
      if (draining) response.shouldKeepAlive = false
      if (handler) handler(request, response)
      else waiting.push([request, response])
    })

    /**
     * Stops listening, serves what is open with `Connection: close`, closes the sockets still idle
     * after IDLE_GRACE_MS; resumes when every socket is closed and every request's fiber has ended.
     */
    const drain = Effect.async<void>((resume) => {
      draining = true
      for (const response of open) {
        if (!response.headersSent) response.shouldKeepAlive = false
      }
      let closed = false
      let graceOver = false
      const check = () => {
        if (closed && running === 0) resume(Effect.void)
      }
      onIdle = () => {
        if (graceOver) server.closeIdleConnections()
        check()
      }
      // net.Server's close: stops listening and leaves the open sockets be (http.Server's own close
      // also closes the idle keep-alive sockets at once, where a request may be on its way).
      net.Server.prototype.close.call(server, () => {
        closed = true
        check()
      })
      const timer = setTimeout(() => {
        graceOver = true
        onIdle?.()
      }, IDLE_GRACE_MS).unref()
      return Effect.sync(() => clearTimeout(timer))
    })

    // A port taken since the check before the start (../portCheck.ts) fails the same way, naming PORT.
    yield* Effect.async<void, PortUnavailable>((resume) => {
      const onError = (cause: NodeJS.ErrnoException) =>
        resume(Effect.fail(listenFailure("PORT", host, port, cause.code)))
      server.once("error", onError)
      server.listen({ host, port }, () => {
        server.off("error", onError)
        resume(Effect.void)
      })
    })
    // The listener's end when the app never got to serve (a failed start): requests that waited are refused.
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        draining = true
        for (const [, response] of waiting.splice(0)) {
          response.writeHead(503, { "Retry-After": "5", Connection: "close" }).end()
        }
        if (!server.listening) return resume(Effect.void)
        server.close(() => resume(Effect.void))
        server.closeIdleConnections()
      })
    )

    const address = server.address()
    const httpServer = HttpServer.make({
      address: typeof address === "object" && address
        ? { _tag: "TcpAddress", hostname: address.address === "::" ? "0.0.0.0" : address.address, port: address.port }
        : { _tag: "UnixAddress", path: String(address) },
      serve: (app, middleware) =>
        Effect.gen(function*() {
          const counted = Effect.suspend(() => {
            running++
            return app
          }).pipe(Effect.ensuring(Effect.sync(() => {
            running--
            if (draining) setImmediate(() => onIdle?.())
          })))
          const serve = yield* (middleware
            ? NodeHttpServer.makeHandler(counted, middleware as never)
            : NodeHttpServer.makeHandler(counted))
          handler = serve
          for (const [request, response] of waiting.splice(0)) handler(request, response)
          yield* Effect.addFinalizer(() => drain)
        })
    })
    return { httpServer, readiness: Readiness.of({ draining: () => draining }) }
  })

/** The HTTP server on `host`:`port` (0: a free port), with what NodeHttpServer.layer also gives, and Readiness. */
export const nodeServer = (host: string, port: number) =>
  Layer.scopedContext(
    Effect.map(
      make(host, port),
      ({ httpServer, readiness }) =>
        Context.make(HttpServer.HttpServer, httpServer).pipe(Context.add(Readiness, readiness))
    )
  ).pipe(Layer.provideMerge(NodeHttpServer.layerContext))
