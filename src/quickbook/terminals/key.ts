/**
 * Quickbook (desk-sales) keys: `svcqb_live_<id>_<secret>` and `svcqb_test_<id>_<secret>` (test
 * keys run against the sandboxes only). Same shape and storage as partner keys (src/partner/auth/apiKey.ts):
 * the 20-character `id` is public, only a SHA-256 hash of the 32-character `secret` is stored and
 * compared in constant time. Partner keys never parse here, and quickbook keys never parse there.
 */
import { KEY_PARTS_PATTERN, randomKeyParts } from "../../partner/auth/apiKey.js"

export type QuickbookKeyMode = "live" | "test"
export const QUICKBOOK_KEY_PREFIXES = { live: "svcqb_live_", test: "svcqb_test_" } as const

const TOKEN = new RegExp(`^svcqb_(live|test)_${KEY_PARTS_PATTERN}$`)

export interface QuickbookKeyParts {
  readonly mode: QuickbookKeyMode
  readonly id: string
  readonly secret: string
}

export const generateQuickbookKey = (mode: QuickbookKeyMode): QuickbookKeyParts & { readonly token: string } => {
  const { id, secret } = randomKeyParts()
  return { mode, id, secret, token: `${QUICKBOOK_KEY_PREFIXES[mode]}${id}_${secret}` }
}

export const parseQuickbookKey = (token: string): QuickbookKeyParts | undefined => {
  const match = TOKEN.exec(token)
  return match ? { mode: match[1] as QuickbookKeyMode, id: match[2]!, secret: match[3]! } : undefined
}

/** Terminal ids are service-issued UUIDs, sent as the `Quickbook-Terminal` header. */
const TERMINAL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
export const parseTerminalHeader = (value: string | undefined): string | undefined => {
  const v = value?.trim().toLowerCase()
  return v !== undefined && TERMINAL_ID.test(v) ? v : undefined
}
