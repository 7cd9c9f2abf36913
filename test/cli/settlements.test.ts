/**
 * The settlements CLI end to end (real processes on a test database): a settlement file imported
 * twice stores its payouts and chargebacks once; the dispute desk's facts are set, checked and
 * cleared; chargebacks are listed for staff, unmatched ones too; bad input is refused with the reason.
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { layerFromUrl } from "../../src/db/Database.js"
import { cli, json } from "../support/cli.js"
import { insertBooking } from "../support/fixtures.js"
import { freshDatabase } from "../support/server.js"

describe("settlements CLI", () => {
  it("imports a settlement file once, lists chargebacks and sets a dispute's facts", { timeout: 180_000 }, async () => {
    const db = await Effect.runPromise(freshDatabase)
    const { id: op } = json(await cli(db, "operators", "create", "--name", "Fjord Payout AS"))
    const sqlRun = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
      Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(layerFromUrl(db, 1)), Effect.orDie))
    const bookingId = await Effect.runPromise(
      insertBooking({ operatorId: op, amountMinor: 50000 }).pipe(Effect.provide(layerFromUrl(db, 1)))
    )
    await sqlRun((sql) => sql`UPDATE bookings SET confirmation_code = 'CLI-CB-1' WHERE id = ${bookingId}`)
    await cli(db, "payment-accounts", "set", "--operator", op, "--merchant", "m-cli")

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "settle-"))
    const file = path.join(dir, "report.json")
    fs.writeFileSync(
      file,
      JSON.stringify({
        merchantId: "m-cli",
        reports: [{
          payoutId: "po-cli-1",
          settlementDate: "2026-06-03",
          transactionStartDate: "2026-06-02",
          transactionEndDate: "2026-06-02",
          reportType: "DAILY",
          totalSale: 100000,
          totalRefund: 0,
          fee: 1500,
          feeVat: 375,
          payout: 33125,
          charges: [
            {
              chargeId: "cb1",
              type: "CHARGEBACK",
              debit: 50000,
              referenceId: "CLI-CB-1",
              transactionAmount: 50000,
              transactionCurrency: "NOK"
            },
            { chargeId: "cb1f", type: "CHARGEBACK_FEE", debit: 15000, referenceId: "CLI-CB-1" },
            { chargeId: "cb2", type: "CHARGEBACK", debit: 9000, paymentId: "nobody" }
          ]
        }]
      })
    )
    const first = json(await cli(db, "settlements", "import-file", "--file", file))
    expect(first).toEqual({ merchantId: "m-cli", payouts: 1, skipped: 0, chargebacks: 2, rematched: 0 })
    const second = json(await cli(db, "settlements", "import-file", "--file", file))
    expect(second).toEqual({ merchantId: "m-cli", payouts: 0, skipped: 1, chargebacks: 0, rematched: 0 })

    const all = json(await cli(db, "settlements", "chargebacks", "--merchant", "m-cli"))
    expect(all).toHaveLength(2)
    const unmatched = json(await cli(db, "settlements", "chargebacks", "--unmatched"))
    expect(unmatched.map((c: any) => c.payment_id)).toEqual(["nobody"])
    const matched = all.find((c: any) => c.booking_id === bookingId)
    expect(matched).toBeDefined()

    const set = json(
      await cli(
        db,
        "settlements",
        "set-dispute",
        "--chargeback",
        matched.id,
        "--dispute-reference",
        "DSP-1",
        "--dispute-status",
        "evidence_requested",
        "--reason",
        "Fraud claimed",
        "--respond-by",
        "2026-06-20",
        "--registered-at",
        "2026-06-04"
      )
    )
    expect(set).toEqual({ id: matched.id, updated: true })
    const facts = () =>
      sqlRun((sql) =>
        sql`SELECT dispute_reference, dispute_status, reason, to_char(respond_by, 'YYYY-MM-DD') AS respond_by,
              to_char(registered_at, 'YYYY-MM-DD') AS registered_at FROM chargebacks WHERE id = ${matched.id}`
      )
    expect((await facts())[0]).toEqual({
      dispute_reference: "DSP-1",
      dispute_status: "evidence_requested",
      reason: "Fraud claimed",
      respond_by: "2026-06-20",
      registered_at: "2026-06-04"
    })
    // A later status; the reason cleared; the rest kept.
    await cli(
      db,
      "settlements",
      "set-dispute",
      "--chargeback",
      matched.id,
      "--dispute-status",
      "won",
      "--clear",
      "reason"
    )
    expect((await facts())[0]).toEqual(
      expect.objectContaining({ dispute_status: "won", reason: null, dispute_reference: "DSP-1" })
    )

    // Refused, with the reason.
    const other = unmatched[0].id
    await expect(cli(db, "settlements", "set-dispute", "--chargeback", other, "--dispute-reference", "DSP-1"))
      .rejects.toThrow(/another chargeback/)
    await expect(cli(db, "settlements", "set-dispute", "--chargeback", matched.id, "--respond-by", "2026-02-30"))
      .rejects.toThrow(/respond-by/)
    await expect(cli(db, "settlements", "set-dispute", "--chargeback", matched.id)).rejects.toThrow(/at least one/)
    await expect(
      cli(db, "settlements", "set-dispute", "--chargeback", "00000000-0000-4000-8000-000000000000", "--reason", "x")
    ).rejects.toThrow(/not found/)
    const bad = path.join(dir, "bad.json")
    fs.writeFileSync(bad, JSON.stringify({ merchantId: "m-cli", reports: [{ payoutId: "x", totalSale: "lots" }] }))
    await expect(cli(db, "settlements", "import-file", "--file", bad)).rejects.toThrow(/not a settlement file/)
  })
})
