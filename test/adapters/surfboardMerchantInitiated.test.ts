/**
 * Pay-later charging at the provider: the adapter's saved cards, merchant-initiated charges and
 * charges found by reference (src/adapters/surfboard/merchantInitiated.ts) against the Surfboard
 * sandbox over HTTP (src/sandbox/surfboard/merchantInitiated.ts), with the `mitOutcome` switch set
 * in process and through `PUT /sandbox/faults`.
 */
import { expect, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { PaymentProvider } from "../../src/ports/PaymentProvider.js"
import { SurfboardSandbox } from "../../src/sandbox/surfboard/index.js"
import { surfboardEnv } from "../sandbox/surfboardEnv.js"

const setup = (name: string) =>
  Effect.gen(function*() {
    const sandbox = yield* SurfboardSandbox
    const merchant = yield* sandbox.createMerchant({ name })
    const card = yield* sandbox.saveCard({
      merchantId: merchant.id,
      amountMinor: 1000,
      currency: "NOK",
      referenceId: name
    })
    return { sandbox, merchant, account: sandbox.account(merchant), pp: yield* PaymentProvider, card }
  })

const charge = (tokenId: string, reference: string) => ({
  tokenId,
  amountMinor: 64900,
  currency: "NOK",
  referenceId: reference,
  description: "Balance FJX-4821",
  idempotencyReference: reference
})

layer(surfboardEnv(), { excludeTestServices: true, timeout: 60_000 })(
  "saved cards and merchant-initiated charges",
  (it) => {
    it.effect("a tokenised payment saves one card; only its token id comes back", () =>
      Effect.gen(function*() {
        const { account, card, pp } = yield* setup("Tokens AS")
        const cards = yield* pp.savedCards(account, card.orderId)
        expect(cards.map((c) => c.tokenId)).toEqual([card.tokenId])
        expect(Object.keys(cards[0]!).sort()).toEqual(["createdAt", "tokenId"])
      }))

    it.effect("paid, soft, hard, SCA: the outcome and the provider's reason", () =>
      Effect.gen(function*() {
        const { account, card, merchant, pp, sandbox } = yield* setup("Outcomes AS")
        const paid = yield* pp.chargeSavedCard(account, charge(card.tokenId, "ref-paid"))
        expect(paid).toMatchObject({ outcome: "paid", declineReason: null })
        expect(paid.paidAt).not.toBeNull()
        for (
          const [outcome, reason] of [
            ["soft_decline", "INSUFFICIENT_FUNDS"],
            ["hard_decline", "CARD_BLOCKED"],
            ["sca_required", "AUTHENTICATION_REQUIRED"]
          ] as const
        ) {
          // Through the admin endpoint, for this merchant only.
          const set = yield* Effect.promise(() =>
            fetch(`${sandbox.baseUrl}/sandbox/faults`, {
              method: "PUT",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ mitOutcome: outcome, merchantId: merchant.id })
            })
          )
          expect(set.status).toBe(200)
          const declined = yield* pp.chargeSavedCard(account, charge(card.tokenId, `ref-${outcome}`))
          expect(declined).toMatchObject({ outcome, declineReason: reason, paidAt: null })
        }
        yield* sandbox.faults.reset
        expect((yield* sandbox.chargesOf(card.tokenId)).map((c) => c.paid)).toEqual([true, false, false, false])
      }))

    it.effect("the same reference twice charges once; findCharge finds it, or answers null", () =>
      Effect.gen(function*() {
        const { account, card, pp, sandbox } = yield* setup("Once AS")
        const first = yield* pp.chargeSavedCard(account, charge(card.tokenId, "ref-once"))
        const again = yield* pp.chargeSavedCard(account, charge(card.tokenId, "ref-once"))
        expect(again.orderId).toBe(first.orderId)
        expect(yield* sandbox.chargesOf(card.tokenId)).toHaveLength(1)
        expect(yield* pp.findCharge(account, "ref-once")).toMatchObject({ orderId: first.orderId, outcome: "paid" })
        expect(yield* pp.findCharge(account, "ref-never-sent")).toBeNull()
      }))

    it.effect("a lost answer: Unavailable, the charge made once; found by its reference", () =>
      Effect.gen(function*() {
        const { account, card, merchant, pp, sandbox } = yield* setup("Lost AS")
        yield* sandbox.faults.set({ loseAnswer: "drop" }, { merchantId: merchant.id })
        const lost = yield* Effect.exit(pp.chargeSavedCard(account, charge(card.tokenId, "ref-lost")))
        yield* sandbox.faults.reset
        expect(Exit.isFailure(lost) && lost.cause._tag === "Fail" && lost.cause.error._tag).toBe(
          "PaymentProviderUnavailable"
        )
        expect(yield* pp.findCharge(account, "ref-lost")).toMatchObject({ outcome: "paid" })
        expect(yield* sandbox.chargesOf(card.tokenId)).toHaveLength(1)
      }))

    it.effect("another merchant's token or an unknown one: refused, nothing charged", () =>
      Effect.gen(function*() {
        const { card } = yield* setup("Owner AS")
        const other = yield* setup("Other AS")
        const refused = yield* Effect.exit(other.pp.chargeSavedCard(other.account, charge(card.tokenId, "ref-other")))
        expect(Exit.isFailure(refused) && refused.cause._tag === "Fail" && refused.cause.error._tag).toBe(
          "PaymentProviderRejected"
        )
        expect(yield* other.sandbox.chargesOf(card.tokenId)).toHaveLength(0)
      }))
  }
)
