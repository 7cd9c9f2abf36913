/** A server that answers every request 200 with an HTML page, as a captive portal or a misrouted proxy does. */
import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

export const captivePortal = Effect.gen(function*() {
  let hits = 0
  const server = yield* Effect.acquireRelease(
    Effect.async<ReturnType<typeof createServer>>((resume) => {
      const server = createServer((_, res) => {
        hits++
        res.writeHead(200, { "content-type": "text/html" }).end("<html>captive portal</html>")
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits }
})
