/**
 * What an error answer may quote back of a client's input (both APIs: the partner API's problem
 * `detail` and `invalid_params[].reason`, quickbook's `clerkMessage`): a stretch of at most
 * ECHO_MAX characters, the rest cut and counted, and a message of at most MESSAGE_MAX characters in
 * all. A 10,000-character value used to come back whole, twice (issue 11 item 12). Pure code.
 */

/** Longest piece of one input value quoted back. */
export const ECHO_MAX = 64

/** Longest message (a problem's `detail`, one `reason`) built from input. */
export const MESSAGE_MAX = 500

/** A value cut by `echo` already (so that cutting twice changes nothing). */
const ECHOED = new RegExp(`^[\\s\\S]{${ECHO_MAX - 1},${ECHO_MAX}}… \\(\\d+ characters\\)$`)

/** A value the client sent, as quoted back: its first ECHO_MAX characters, then "… (N characters)". */
export const echo = (value: string): string =>
  value.length <= ECHO_MAX || ECHOED.test(value) ? value : `${cut(value, ECHO_MAX)}… (${value.length} characters)`

/** The first `max` UTF-16 units, without splitting a surrogate pair. */
const cut = (value: string, max: number) => {
  const code = value.charCodeAt(max - 1)
  return value.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max)
}

/** A JSON string literal, escapes included (as schema messages quote what they got: `actual "…"`). */
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g

/**
 * A message that may quote input (e.g. a schema's `Expected …, actual "…"`): every quoted string
 * longer than ECHO_MAX cut as `echo` does, then the whole message cut to MESSAGE_MAX.
 */
export const clipEchoes = (message: string): string => {
  const clipped = message.replace(JSON_STRING, (literal) => {
    if (literal.length <= ECHO_MAX + 2) return literal
    let value: unknown
    try {
      value = JSON.parse(literal)
    } catch {
      value = literal.slice(1, -1)
    }
    return typeof value === "string" && value.length > ECHO_MAX ? JSON.stringify(echo(value)) : literal
  })
  return clipped.length <= MESSAGE_MAX ? clipped : `${cut(clipped, MESSAGE_MAX)}… (cut)`
}
