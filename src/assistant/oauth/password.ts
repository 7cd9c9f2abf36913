/**
 * Passwords of the people who sign in to the assistant's authorization server: scrypt from
 * node:crypto (memory-hard), stored as `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>`, compared in
 * constant time. `verifyPassword` also works (and costs the same) for an unknown user, against a
 * fixed dummy hash, so the time taken does not tell whether the email exists.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

const N = 16384
const R = 8
const P = 1
const KEY_LENGTH = 32
const MAX_MEMORY = 64 * 1024 * 1024

export const MIN_PASSWORD_LENGTH = 10

const derive = (password: string, salt: Buffer, n: number, r: number, p: number) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(
      password.normalize("NFKC"),
      salt,
      KEY_LENGTH,
      { N: n, r, p, maxmem: MAX_MEMORY },
      (err, key) => err ? reject(err) : resolve(key)
    )
  )

export const hashPassword = async (password: string): Promise<string> => {
  const salt = randomBytes(16)
  const key = await derive(password, salt, N, R, P)
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64")}$${key.toString("base64")}`
}

/** A hash of nothing anyone knows, checked when the email is unknown (same cost, same answer). */
const DUMMY = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString("base64")}$${
  Buffer.alloc(KEY_LENGTH).toString("base64")
}`

export const verifyPassword = async (password: string, stored: string | null | undefined): Promise<boolean> => {
  const parts = (stored ?? DUMMY).split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return false
  const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  const salt = Buffer.from(parts[4]!, "base64")
  const expected = Buffer.from(parts[5]!, "base64")
  const key = await derive(password, salt, n, r, p)
  return stored != null && key.length === expected.length && timingSafeEqual(key, expected)
}
