/**
 * CLI for payouts and chargebacks (issue 15 part A; src/settlements/): import a settlement file (the
 * same reports and charges the `settlement-import` job reads from the provider; idempotent), run the
 * import now, name a merchant's provider partner, list chargebacks (matched or not), and set a
 * dispute's facts as the dispute desk knows them. Output is JSON.
 *
 *   settlements import-file --file report.json
 *   settlements run [--merchant M]
 *   settlements set-partner --merchant M --partner P
 *   settlements chargebacks [--merchant M] [--unmatched]
 *   settlements set-dispute --chargeback <id> [--dispute-reference R] [--dispute-status triage|…]
 *     [--reason "…"] [--respond-by YYYY-MM-DD] [--registered-at YYYY-MM-DD] [--clear <field>]…
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Either, Layer, Option } from "effect"
import * as fs from "node:fs"
import { AdminError } from "../operators/Operators.js"
import { checkDisputeFacts, DISPUTE_FIELDS, DISPUTE_STATUSES, parseSettlementFile } from "../settlements/rules.js"
import { SettlementImport } from "../settlements/SettlementImport.js"
import { SettlementsRepo } from "../settlements/SettlementsRepo.js"
import { DatabaseForCli } from "./database.js"

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const withRepo = <A, E>(f: (repo: SettlementsRepo) => Effect.Effect<A, E>) =>
  Effect.flatMap(SettlementsRepo, f).pipe(Effect.provide(SettlementsRepo.Default), Effect.provide(DatabaseForCli))

/** The importer with the payment provider (loaded only when a command needs it). */
const ImporterForCli = Layer.unwrapEffect(
  Effect.promise(() => import("../adapters/live.js")).pipe(
    Effect.map(({ ExternalSystemsLive }) =>
      SettlementImport.Default.pipe(Layer.provide(ExternalSystemsLive), Layer.provideMerge(DatabaseForCli))
    )
  )
)

const merchantOption = Options.text("merchant").pipe(Options.withDescription("merchant id at the payment provider"))

const importFile = Command.make(
  "import-file",
  { file: Options.file("file", { exists: "yes" }).pipe(Options.withDescription("settlement file (JSON)")) },
  (o) =>
    Effect.gen(function*() {
      const text = yield* Effect.try({
        try: () => fs.readFileSync(o.file, "utf8"),
        catch: () => new AdminError({ message: `${o.file} cannot be read` })
      })
      const json = yield* Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: () => new AdminError({ message: `${o.file} is not JSON` })
      })
      const parsed = parseSettlementFile(json)
      if (Either.isLeft(parsed)) {
        return yield* new AdminError({ message: `${o.file} is not a settlement file:\n${parsed.left}` })
      }
      return yield* Effect.flatMap(SettlementImport, (importer) => importer.importFile(parsed.right))
    }).pipe(Effect.provide(ImporterForCli), Effect.flatMap(print))
).pipe(
  Command.withDescription("import a settlement file (reports with their charges); a payout already stored is skipped")
)

const run = Command.make(
  "run",
  { merchant: Options.optional(merchantOption) },
  (o) =>
    Effect.flatMap(SettlementImport, (importer) => importer.run(Option.getOrUndefined(o.merchant))).pipe(
      Effect.provide(ImporterForCli),
      Effect.flatMap(print)
    )
).pipe(Command.withDescription("read the provider's settlement reports now (what the settlement-import job does)"))

const setPartner = Command.make(
  "set-partner",
  { merchant: merchantOption, partner: Options.text("partner").pipe(Options.withDescription("provider partner id")) },
  (o) =>
    withRepo((repo) => repo.setPartner(o.merchant, o.partner)).pipe(
      Effect.zipRight(Console.log(`merchant ${o.merchant}: partner ${o.partner}`))
    )
).pipe(Command.withDescription("name the provider partner a merchant belongs to (its reports' path needs it)"))

const chargebacks = Command.make(
  "chargebacks",
  {
    merchant: Options.optional(merchantOption),
    unmatched: Options.boolean("unmatched").pipe(Options.withDescription("only those that match no booking"))
  },
  (o) => withRepo((repo) => repo.listChargebacks(Option.getOrNull(o.merchant), o.unmatched)).pipe(Effect.flatMap(print))
).pipe(Command.withDescription("chargebacks from the settlement reports, newest first (unmatched ones too)"))

const setDispute = Command.make(
  "set-dispute",
  {
    chargeback: Options.text("chargeback").pipe(Options.withDescription("chargeback id")),
    disputeReference: Options.optional(Options.text("dispute-reference")),
    disputeStatus: Options.optional(Options.choice("dispute-status", DISPUTE_STATUSES)),
    reason: Options.optional(Options.text("reason")),
    respondBy: Options.optional(Options.text("respond-by").pipe(Options.withDescription("YYYY-MM-DD"))),
    registeredAt: Options.optional(Options.text("registered-at").pipe(Options.withDescription("YYYY-MM-DD"))),
    clear: Options.choice("clear", DISPUTE_FIELDS).pipe(
      Options.repeated,
      Options.withDescription("a fact to clear (repeat for several)")
    )
  },
  (o) =>
    Effect.gen(function*() {
      if (!UUID.test(o.chargeback)) return yield* new AdminError({ message: "--chargeback must be a chargeback id" })
      const facts = checkDisputeFacts({
        disputeReference: Option.getOrUndefined(o.disputeReference),
        disputeStatus: Option.getOrUndefined(o.disputeStatus),
        reason: Option.getOrUndefined(o.reason),
        respondBy: Option.getOrUndefined(o.respondBy),
        registeredAt: Option.getOrUndefined(o.registeredAt),
        clear: o.clear
      })
      if (Either.isLeft(facts)) return yield* new AdminError({ message: facts.left })
      return yield* withRepo((repo) =>
        Effect.gen(function*() {
          const reference = facts.right.disputeReference
          if (reference && (yield* repo.referenceTaken(reference, o.chargeback))) {
            return yield* new AdminError({ message: `dispute reference ${reference} is another chargeback's` })
          }
          const found = yield* repo.setDisputeFacts(o.chargeback, facts.right)
          if (!found) return yield* new AdminError({ message: `chargeback ${o.chargeback} not found` })
          return { id: o.chargeback, updated: true }
        })
      )
    }).pipe(Effect.flatMap(print))
).pipe(Command.withDescription("set a dispute's facts as the dispute desk knows them"))

export const settlements = Command.make("settlements").pipe(
  Command.withDescription("payouts and chargebacks from the payment provider's settlement reports"),
  Command.withSubcommands([importFile, run, setPartner, chargebacks, setDispute])
)
