/**
 * Who is calling the assistant-facing MCP server (issue 16; docs/assistant.md): the connection (an
 * OAuth grant a person gave an MCP client) behind the bearer token. A connection acts like a key that
 * person created: it is backed by a row of `api_keys` (kind `assistant`, no usable secret) with the
 * operators and scopes picked on the consent page, so the REST API's visibility, rate limits, daily
 * limits, idempotency and audit apply to it unchanged (`CurrentKey` carries that key). This tag adds
 * what only the assistant channel knows, for the audit and the confirmations.
 */
import { Context } from "effect"

export interface AssistantConnectionInfo {
  /** The connection (grant) id; also the id of its backing `api_keys` row. */
  readonly connectionId: string
  /** The person who signed in and consented. */
  readonly userId: string
  readonly userEmail: string
  /** The OAuth client (the assistant) and the name it registered. */
  readonly clientId: string
  readonly clientName: string
}

export class AssistantConnection
  extends Context.Tag("Assistant/AssistantConnection")<AssistantConnection, AssistantConnectionInfo>()
{}
