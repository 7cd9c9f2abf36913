/**
 * Declares a Partner API endpoint as a write: the errors the shared write machinery can answer
 * (400 for the `Idempotency-Key` header, 409, 422, 429 daily limit, 503), those of its JSON body
 * (413 over the size limit, 415 not JSON: src/http/requestBody.ts) and, in the OpenAPI
 * document, the required `Idempotency-Key` request header and the `Idempotent-Replayed` response
 * header. The handler then runs its action through `Writes.run` (./Writes.ts). Every write of the
 * API acts on the one booking or manifest row its path names: `writeOnId` declares one.
 */
import { HttpApiEndpoint, type HttpMethod, OpenApi } from "@effect/platform"
import {
  DailyLimitReached,
  IdempotencyInProgress,
  IdempotencyMismatch,
  InvalidRequest,
  NotFound,
  NotPossible,
  Unavailable
} from "../../domain/errors.js"
import type { Json } from "../../http/openapiSchemas.js"
import { IdPath } from "../../http/params.js"
import { BodyTooLarge, UnsupportedMediaType } from "../../http/requestBody.js"
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_RULE, IDEMPOTENT_REPLAYED_HEADER } from "./rules.js"

/** Answers that can be replayed: results and final refusals. */
const REPLAYABLE = new Set(["200", "400", "404", "422"])

const documentIdempotency = (op: Json): Json => ({
  ...op,
  parameters: [
    ...(op.parameters ?? []),
    {
      name: IDEMPOTENCY_KEY_HEADER,
      in: "header",
      required: true,
      description: `A new UUID per action, reused only to retry that action; ${IDEMPOTENCY_KEY_RULE}. ` +
        "For 24 hours the same key with the same request replays the first answer; with a different " +
        "request it answers 422; while the first request runs, 409. See /api/v1/docs/writes.md.",
      schema: {
        type: "string",
        // Bare or quoted, never half-quoted (parseIdempotencyKey refuses `"abc…`).
        pattern: "^(?:[A-Za-z0-9._~:+/=-]{8,255}|\"[A-Za-z0-9._~:+/=-]{8,255}\")$",
        maxLength: 257,
        example: "\"8e03978e-40d5-43e8-bc93-6894a57f9324\""
      }
    }
  ],
  responses: Object.fromEntries(
    Object.entries<Json>(op.responses ?? {}).map(([status, response]) => [
      status,
      REPLAYABLE.has(status)
        ? {
          ...response,
          headers: {
            ...response.headers,
            [IDEMPOTENT_REPLAYED_HEADER]: {
              description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
              schema: { type: "string", enum: ["true"] }
            }
          }
        }
        : response
    ])
  )
})

/** Marks an endpoint as an idempotent write (see the module comment). */
export const idempotentWrite = <
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Headers,
  Success,
  Error,
  R,
  RE
>(endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>) =>
  endpoint
    .addError(InvalidRequest)
    .addError(IdempotencyInProgress)
    .addError(IdempotencyMismatch)
    .addError(DailyLimitReached)
    .addError(Unavailable)
    .addError(BodyTooLarge)
    .addError(UnsupportedMediaType)
    .annotate(OpenApi.Transform, documentIdempotency)

/**
 * A write on the one booking or manifest row the path's `:id` names (every Partner API write): an
 * idempotent write (above) that also answers 404 when the id is none of the key's operators' and
 * 422 when the action is not possible for it.
 */
export const writeOnId = <const Name extends string>(name: Name, path: HttpApiEndpoint.PathSegment) =>
  idempotentWrite(
    HttpApiEndpoint.post(name, path)
      .setPath(IdPath)
      .addError(NotFound)
      .addError(NotPossible)
  )
