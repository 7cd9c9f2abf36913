/**
 * Every tool of the assistant-facing MCP server, in the order `tools/list` shows them, and the layer
 * of the services they use (the server provides it once).
 */
import { Layer } from "effect"
import { meTool } from "./me.js"
import type { AssistantTool } from "./tool.js"

/** The services the tools need (the union of their requirements besides CurrentKey/AssistantConnection). */
export type AssistantToolServices = never

export const AssistantToolsLive: Layer.Layer<AssistantToolServices> = Layer.empty

export const assistantTools: ReadonlyArray<AssistantTool> = [meTool]
