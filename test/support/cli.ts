/** The admin CLI as `npm run cli -- ...` runs it: a real process on a test database. */
import { execFile } from "node:child_process"
import * as path from "node:path"
import { promisify } from "node:util"

const ROOT = path.resolve(import.meta.dirname, "../..")
const exec = promisify(execFile)

/** Runs the CLI; resolves with stdout, rejects with the output when it exits non-zero. */
export const cli = (databaseUrl: string, ...args: Array<string>) => cliWith(databaseUrl, {}, ...args)

/** The CLI with more settings in its environment (e.g. the payment provider's). */
export const cliWith = (databaseUrl: string, env: Record<string, string>, ...args: Array<string>) =>
  exec(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: "warning", DEMO_DATA: "false" }
  }).then((r) => r.stdout, (e) => Promise.reject(new Error(`${args.join(" ")} failed: ${e.stderr || e.stdout}`)))

/** The JSON a command printed (anything before it, such as log lines, skipped). */
export const json = (out: string) => JSON.parse(out.slice(out.search(/[[{]/)))
