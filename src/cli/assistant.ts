/**
 * CLI for the assistant-facing MCP server (issue 16; docs/assistant.md "Signing in"): give a person
 * a password for the sign-in page, list connections (the grants people gave MCP clients), revoke
 * one. Output is JSON.
 *
 *   assistant set-password --user EMAIL [--password P]   (without --password: a random one, printed once)
 *   assistant connections [--user EMAIL]
 *   assistant revoke --connection ID
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { AssistantAdmin } from "../assistant/oauth/AssistantAdmin.js"
import { DatabaseForCli } from "./database.js"

const print = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

const withAdmin = <A, E>(f: (admin: AssistantAdmin) => Effect.Effect<A, E>) =>
  Effect.flatMap(AssistantAdmin, f).pipe(Effect.provide(AssistantAdmin.Default), Effect.provide(DatabaseForCli))

const setPassword = Command.make(
  "set-password",
  {
    user: Options.text("user").pipe(Options.withDescription("the person's email")),
    password: Options.optional(Options.redacted("password")).pipe(
      Options.withDescription("the password (at least 10 characters); omitted: a random one is made and printed once")
    )
  },
  (o) => {
    const password = Option.match(o.password, {
      onNone: () => randomBytes(15).toString("base64url"),
      onSome: Redacted.value
    })
    return withAdmin((admin) => admin.setPassword(o.user, password)).pipe(
      Effect.zipRight(
        print({
          user: o.user.toLowerCase(),
          ...(Option.isNone(o.password) ? { password } : {}),
          note: "the person signs in with this on the MCP sign-in page"
        })
      )
    )
  }
)

const connections = Command.make(
  "connections",
  { user: Options.optional(Options.text("user")).pipe(Options.withDescription("only this person's")) },
  (o) =>
    withAdmin((admin) => admin.listConnections(Option.getOrUndefined(o.user))).pipe(
      Effect.flatMap((rows) =>
        print(rows.map((r) => ({
          id: r.id,
          user: r.user_email,
          client: r.client_name,
          client_id: r.client_id,
          scopes: r.scopes,
          operators: r.operators,
          created_at: r.created_at.toISOString(),
          revoked_at: r.revoked_at?.toISOString() ?? null
        })))
      )
    )
)

const revoke = Command.make(
  "revoke",
  {
    connection: Options.text("connection").pipe(Options.withDescription("connection id (from `assistant connections`)"))
  },
  (o) =>
    withAdmin((admin) => admin.revokeConnection(o.connection)).pipe(
      Effect.zipRight(print({ revoked: o.connection }))
    )
)

export const assistant = Command.make("assistant").pipe(
  Command.withDescription("the assistant-facing MCP server: passwords and connections"),
  Command.withSubcommands([setPassword, connections, revoke])
)
