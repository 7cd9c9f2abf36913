/**
 * A real SMTP server for tests (the npm package `smtp-server`) on a loopback port, recording every
 * message it accepts, with switches for the failures an outbox meets: down (nothing listening),
 * a 4xx or 5xx answer to a recipient, a late greeting, a late answer to the message data.
 */
import { SMTPServer, type SMTPServerError } from "smtp-server"
import { freePort } from "./globalSetup.js"

export interface ReceivedMessage {
  readonly messageId: string | null
  readonly subject: string | null
  readonly from: string | null
  readonly to: ReadonlyArray<string>
  readonly user: string | null
  readonly raw: string
}

export interface SmtpBehaviour {
  /** Answer RCPT TO with this code (e.g. 451 or 550) for every recipient, or for those listed. */
  rcptCode?: number | undefined
  rcptOnly?: ReadonlyArray<string> | undefined
  /** Wait this long before the greeting (a server too slow to answer). */
  greetingDelayMs?: number | undefined
  /** Accept the data, but answer only after this long (the message is recorded when answered). */
  dataDelayMs?: number | undefined
  /** Wait this long before accepting each message (a server under load, for races). */
  perMessageDelayMs?: number | undefined
}

export interface TestSmtp {
  readonly port: number
  readonly url: string
  readonly received: Array<ReceivedMessage>
  behaviour: SmtpBehaviour
  /** Stop listening (the port then refuses connections) / listen again on the same port. */
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
  readonly connections: () => number
}

const header = (raw: string, name: string): string | null => {
  const head = raw.split(/\r?\n\r?\n/)[0] ?? ""
  const unfolded = head.replace(/\r?\n[ \t]+/g, " ")
  const m = new RegExp(`^${name}:\\s*(.*)$`, "im").exec(unfolded)
  return m ? m[1]!.trim() : null
}

export const startTestSmtp = async (
  options: { readonly user?: string; readonly password?: string; readonly port?: number } = {}
): Promise<TestSmtp> => {
  const port = options.port ?? (await freePort())
  const received: Array<ReceivedMessage> = []
  let server: SMTPServer | undefined
  let connections = 0
  const state: { behaviour: SmtpBehaviour } = { behaviour: {} }

  const fail = (code: number, message: string): SMTPServerError =>
    Object.assign(new Error(message), { responseCode: code })

  const make = () =>
    new SMTPServer({
      logger: false,
      disabledCommands: ["STARTTLS"],
      authOptional: options.user === undefined,
      allowInsecureAuth: true,
      closeTimeout: 50,
      socketTimeout: 60_000,
      onConnect(_session, callback) {
        connections++
        const delay = state.behaviour.greetingDelayMs
        if (delay) setTimeout(() => callback(), delay)
        else callback()
      },
      onAuth(auth, _session, callback) {
        if (auth.username === options.user && auth.password === options.password) {
          return callback(null, { user: auth.username })
        }
        return callback(fail(535, "5.7.8 Authentication credentials invalid"))
      },
      onRcptTo(address, _session, callback) {
        const { rcptCode, rcptOnly } = state.behaviour
        if (rcptCode && (!rcptOnly || rcptOnly.includes(address.address))) {
          return callback(fail(rcptCode, rcptCode >= 500 ? "5.1.1 No such user here" : "4.3.0 Try again later"))
        }
        callback()
      },
      onData(stream, session, callback) {
        const chunks: Array<Buffer> = []
        stream.on("data", (c: Buffer) => chunks.push(c))
        stream.on("end", () => {
          const raw = Buffer.concat(chunks).toString("utf8")
          const accept = () => {
            received.push({
              messageId: header(raw, "Message-ID"),
              subject: header(raw, "Subject"),
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
              to: session.envelope.rcptTo.map((r) => r.address),
              user: typeof session.user === "string" ? session.user : null,
              raw
            })
            callback(null, `2.0.0 Ok: queued as ${received.length}`)
          }
          const delay = (state.behaviour.dataDelayMs ?? 0) + (state.behaviour.perMessageDelayMs ?? 0)
          if (delay > 0) setTimeout(accept, delay)
          else accept()
        })
      }
    })

  const start = () =>
    new Promise<void>((resolve, reject) => {
      server = make()
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => resolve())
    })
  const stop = () =>
    new Promise<void>((resolve) => {
      const s = server
      server = undefined
      if (!s) return resolve()
      s.close(() => resolve())
    })

  await start()
  const credentials = options.user === undefined
    ? ""
    : `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password ?? "")}@`
  return {
    port,
    url: `smtp://${credentials}127.0.0.1:${port}`,
    received,
    get behaviour() {
      return state.behaviour
    },
    set behaviour(b: SmtpBehaviour) {
      state.behaviour = b
    },
    stop,
    start,
    connections: () => connections
  }
}

/**
 * Not quite an SMTP server: greets, then answers EHLO with an endless multi-line reply, one line
 * every 100 ms, so that no inactivity timeout ever fires.
 */
export const startTricklingServer = async (): Promise<
  { readonly port: number; readonly stop: () => Promise<void> }
> => {
  const net = await import("node:net")
  const server = net.createServer((socket) => {
    let timer: ReturnType<typeof setInterval> | undefined
    socket.on("error", () => {})
    socket.on("close", () => clearInterval(timer))
    socket.write("220 slow.example ESMTP\r\n")
    socket.once("data", () => {
      timer = setInterval(() => {
        if (!socket.destroyed) socket.write("250-still thinking\r\n")
      }, 100)
    })
  })
  const port = await freePort()
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()))
  return { port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}
