/**
 * The signed links to a commission document's PDF and CSV (docs/api/invoices.md "Files"):
 * `<PUBLIC_URL>/api/v1/finance/invoice-files/<document id>.<pdf|csv>?exp=&sig=`, valid for 15
 * minutes, opened without a key. The signature is the shared scheme of src/http/linkSignature.ts
 * (purpose `commission-invoice-file`, subject `<id>.<ext>`) under a secret derived from the shared
 * secret every instance has (service_secrets). Without PUBLIC_URL the base is `http://HOST:<port>`.
 */
import { HttpServer } from "@effect/platform"
import { Effect, Option } from "effect"
import { AppConfig, baseUrlOf } from "../config.js"
import { checkLink, deriveLinkSecret, type LinkCheck, signLink } from "../http/linkSignature.js"
import { ServiceSecretsRepo } from "../http/ServiceSecretsRepo.js"

export const INVOICE_FILES_PATH = "/api/v1/finance/invoice-files"
/** How long a file link opens its file. */
export const INVOICE_LINK_SECONDS = 15 * 60

const PURPOSE = "commission-invoice-file"

export type InvoiceFileKind = "pdf" | "csv"

export class InvoiceFileLinks extends Effect.Service<InvoiceFileLinks>()("Invoices/InvoiceFileLinks", {
  effect: Effect.gen(function*() {
    const app = yield* AppConfig
    const secrets = yield* ServiceSecretsRepo
    const server = yield* Effect.serviceOption(HttpServer.HttpServer)
    const port = Option.match(server, {
      onNone: () => app.port,
      onSome: (s) => (s.address._tag === "TcpAddress" ? s.address.port : app.port)
    })
    const base = baseUrlOf(app, port).replace(/\/+$/, "")
    const shared = yield* secrets.cursorSecret()
    if (Option.isNone(shared)) {
      return yield* Effect.dieMessage("service_secrets has no shared secret; run the migrations")
    }
    const secret = deriveLinkSecret(shared.value.value, "commission-invoice-file-links")

    /** The link to a document's file, valid until `nowMillis` + 15 minutes (Unix seconds in `exp`). */
    const url = (invoiceId: string, kind: InvoiceFileKind, nowMillis: number) => {
      const exp = Math.floor(nowMillis / 1000) + INVOICE_LINK_SECONDS
      const file = `${invoiceId}.${kind}`
      return { url: `${base}${INVOICE_FILES_PATH}/${file}?exp=${exp}&sig=${signLink(secret, PURPOSE, file, exp)}`, exp }
    }

    /** Whether `exp`/`sig` open `file` (`<id>.<ext>`) now. */
    const check = (file: string, exp: string, sig: string, nowMillis: number): LinkCheck =>
      checkLink(secret, PURPOSE, file, exp, sig, nowMillis)

    return { url, check } as const
  }),
  dependencies: [ServiceSecretsRepo.Default]
}) {}
