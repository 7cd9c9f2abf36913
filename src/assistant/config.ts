import { Config } from "effect"

/** The assistant-facing MCP server and its authorization server (src/assistant/, docs/assistant.md). */
export const AssistantConfig = Config.all({
  /** The MCP endpoint's public URL (the OAuth resource); default `{base_url}/mcp`. */
  mcpPublicUrl: Config.option(Config.string("MCP_PUBLIC_URL")),
  /**
   * Browser origins (comma-separated hostnames or origins, e.g. `app.example.com`) allowed to call the
   * MCP endpoint besides the service's own host; any other `Origin` is refused (403, DNS rebinding).
   */
  mcpAllowedOrigins: Config.array(Config.string(), "MCP_ALLOWED_ORIGINS").pipe(Config.withDefault([])),
  /** The OAuth issuer; default the base URL (PUBLIC_URL, else http://HOST:PORT). */
  oauthIssuer: Config.option(Config.string("OAUTH_ISSUER"))
})

export type AssistantConfig = Config.Config.Success<typeof AssistantConfig>
