/**
 * The hosted payment page behind a payment link (`paymentPageLink`), as Surfboard's PaymentPage
 * terminals serve it: `GET /pay/:orderId?pi=<token>` shows the amount and a pay button, `POST` the
 * same URL pays it as if a card were entered (`outcome=declined` declines instead). Not part of the
 * API: never faulted, and no credentials (the token in the link is the access).
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { alphaCurrency } from "../../adapters/surfboard/currency.js"
import { SandboxFailure } from "./failure.js"
import type { Store } from "./store.js"

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const page = (status: number, title: string, body: string) =>
  HttpServerResponse.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head>` +
      `<body><main><h1>${escape(title)}</h1>${body}</main></body></html>`
  ).pipe(HttpServerResponse.setStatus(status))

const money = (minor: number, numeric: string) => {
  const currency = alphaCurrency(numeric)
  if (currency === undefined) return `${minor} (${numeric})`
  const format = new Intl.NumberFormat("en", { style: "currency", currency })
  return format.format(minor / 10 ** (format.resolvedOptions().maximumFractionDigits ?? 2))
}

const token = Effect.map(
  HttpServerRequest.ParsedSearchParams,
  (params) => (typeof params.pi === "string" ? params.pi : "")
)
const orderId = Effect.map(HttpRouter.params, (params) => params.orderId ?? "")

const failurePage = (f: SandboxFailure) =>
  page(
    f.status,
    f.status === 410 ? "This payment link has expired" : f.status === 409 ? "Nothing to pay" : "Payment page not found",
    `<p>${escape(f.message)}</p>`
  )

export const payPage = (store: Store) =>
  HttpRouter.empty.pipe(
    HttpRouter.get(
      "/pay/:orderId",
      Effect.gen(function*() {
        const order = yield* store.pageOrder(yield* orderId, yield* token)
        const line = order.body.orderLines?.[0]?.name ?? "Payment"
        const amount = money(order.amount_minor, order.currency)
        if (order.status === "PAYMENT_COMPLETED") {
          return yield* page(200, "Paid", `<p>${escape(line)}: ${escape(amount)} is paid. Thank you.</p>`)
        }
        if (order.status === "PAYMENT_CANCELLED") {
          return yield* page(410, "This payment link has expired", `<p>${escape(line)}</p>`)
        }
        return yield* page(
          200,
          `Pay ${amount} to ${order.merchant_name}`,
          `<p>${escape(line)}</p><p>Valid until ${escape(order.page_expires_at?.toISOString() ?? "")}</p>` +
            `<form method="post"><button name="outcome" value="approved">Pay ${escape(amount)}</button> ` +
            `<button name="outcome" value="declined">Decline</button></form>`
        )
      }).pipe(
        Effect.catchAll((e) => (e instanceof SandboxFailure ? failurePage(e) : page(500, "Something went wrong", "")))
      )
    ),
    HttpRouter.post(
      "/pay/:orderId",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const form = new URLSearchParams(yield* request.text)
        const declined = form.get("outcome") === "declined"
        const paid = yield* store.pay(yield* orderId, { token: yield* token, declined })
        return yield* paid.status === "PAYMENT_COMPLETED"
          ? page(200, "Paid", `<p>Payment ${escape(paid.paymentId)} completed. Thank you.</p>`)
          : page(402, "Payment declined", `<p>Your card was declined. You can try again.</p>`)
      }).pipe(
        Effect.catchAll((e) => (e instanceof SandboxFailure ? failurePage(e) : page(500, "Something went wrong", "")))
      )
    )
  )
