/**
 * A TCP proxy in front of a port on 127.0.0.1 that can be frozen: from then on nothing passes in
 * either direction and new connections are held open unanswered, as with a database host that fell
 * off the network (not one that refuses: that would fail fast).
 */
import * as net from "node:net"

export const tcpProxy = (targetPort: number) =>
  new Promise<{ readonly port: number; readonly freeze: () => void; readonly close: () => void }>((resolve) => {
    let frozen = false
    const sockets = new Set<net.Socket>()
    const track = (socket: net.Socket) => {
      sockets.add(socket)
      socket.on("error", () => {})
      socket.once("close", () => sockets.delete(socket))
    }
    const server = net.createServer((client) => {
      track(client)
      if (frozen) return
      const upstream = net.connect(targetPort, "127.0.0.1")
      track(upstream)
      client.on("data", (chunk) => frozen || upstream.write(chunk))
      upstream.on("data", (chunk) => frozen || client.write(chunk))
      client.once("close", () => frozen || upstream.destroy())
      upstream.once("close", () => frozen || client.destroy())
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as net.AddressInfo
      resolve({
        port: address.port,
        freeze: () => {
          frozen = true
        },
        close: () => {
          server.close()
          for (const socket of sockets) socket.destroy()
        }
      })
    })
  })
