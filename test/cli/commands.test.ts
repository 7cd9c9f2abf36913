/** The admin CLI end to end: real processes (as `npm run cli -- ...` runs them) on a test database. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { cli, json } from "../support/cli.js"
import { freePort } from "../support/globalSetup.js"
import { freshDatabase } from "../support/server.js"

describe("admin CLI", () => {
  it("creates operators, users, memberships, sites and keys; lists and revokes keys; changes roles", {
    timeout: 120_000
  }, async () => {
    const db = await Effect.runPromise(freshDatabase)
    const { id: op } = json(
      await cli(db, "operators", "create", "--name", "Nordic Kayak AS", "--timezone", "Europe/Oslo")
    )
    const { id: other } = json(await cli(db, "operators", "create", "--name", "Other AS"))
    await expect(cli(db, "operators", "create", "--name", "Typo AS", "--timezone", "Europe/Olso")).rejects.toThrow(
      /unknown time zone Europe\/Olso/
    )
    expect(json(await cli(db, "operators", "list")).map((o: any) => o.name)).toEqual(["Nordic Kayak AS", "Other AS"])
    await cli(db, "users", "create", "--email", "Anna@NordicKayak.no", "--name", "Anna Dahl")
    expect(await cli(db, "members", "add", "--operator", op, "--user", "anna@nordickayak.no", "--role", "owner"))
      .toContain("owner")
    const { id: site } = json(
      await cli(db, "sites", "create", "--domain", "nordickayak.no", "--name", "Nordic Kayak", "--owner", op)
    )
    expect(await cli(db, "sites", "add-operator", "--site", site, "--operator", other)).toContain("added")

    // Not owner or admin of the other operator: refused.
    await expect(
      cli(
        db,
        "keys",
        "create",
        "--user",
        "anna@nordickayak.no",
        "--operator",
        other,
        "--scope",
        "bookings:read",
        "--name",
        "x"
      )
    )
      .rejects.toThrow(/not owner or admin/)

    const created = await cli(
      db,
      "keys",
      "create",
      "--user",
      "anna@nordickayak.no",
      "--operator",
      op,
      "--scope",
      "bookings:read",
      "--scope",
      "guests.contact:read",
      "--name",
      "Booking sync",
      "--expires-in-days",
      "30"
    )
    const token = /svc_live_[A-Za-z0-9]{20}_[A-Za-z0-9]{32}/.exec(created)?.[0]
    expect(token).toBeDefined()
    const id = token!.slice("svc_live_".length, "svc_live_".length + 20)
    const listed = json(await cli(db, "keys", "list"))
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({
      id,
      name: "Booking sync",
      scopes: ["bookings:read", "guests.contact:read"],
      revoked_at: null,
      operators: ["Nordic Kayak AS"]
    })
    expect(JSON.stringify(listed)).not.toContain(token!.slice(-32))
    const days = (Date.parse(listed[0].expires_at) - Date.now()) / 86_400_000
    expect(Math.round(days)).toBe(30)

    expect(await cli(db, "members", "set-role", "--operator", op, "--user", "anna@nordickayak.no", "--role", "member"))
      .toContain("member")
    expect(await cli(db, "keys", "revoke", id)).toContain("revoked")
    expect(json(await cli(db, "keys", "list", "--operator", op))[0].revoked_at).not.toBeNull()
  })
})

const exec = promisify(execFile)

describe("admin CLI output", () => {
  it("prints only its JSON on stdout and its log lines on stderr (`npm run cli -- operators list | jq` works)", {
    timeout: 180_000
  }, async () => {
    // On the embedded database, as a newcomer runs it: starting it logs at info level.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "partner-cli-"))
    fs.chmodSync(dataDir, 0o755)
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DATA_DIR: dataDir,
        EMBEDDED_PG_PORT: String(await freePort()),
        LOG_LEVEL: "info"
      }
      delete env.DATABASE_URL
      const { stdout, stderr } = await exec(process.execPath, ["--import", "tsx", "src/main.ts", "operators", "list"], {
        cwd: path.resolve(import.meta.dirname, "../.."),
        env
      })
      expect(JSON.parse(stdout), stdout).toEqual([])
      expect(stderr).toContain("embedded PostgreSQL ready")
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
