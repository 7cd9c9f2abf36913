/** Setting readers shared by the feature folders' `config.ts` files (effect/Config). */
import { Config, ConfigError, Cron, Either, Option, Redacted } from "effect"

/** A secret that may be unset: set but blank (`NAME=` in an env file) is unset too. */
export const optionalSecret = (name: string) =>
  Config.option(Config.redacted(name)).pipe(
    Config.map(Option.filter((value) => Redacted.value(value).trim() !== ""))
  )

/** A cron expression in UTC, checked when the settings are read. */
export const cronSetting = (name: string, fallback: string) =>
  Config.string(name).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((expr) =>
      Either.mapLeft(Cron.parse(expr, "UTC"), (e) =>
        ConfigError.InvalidData([name], `not a cron expression: ${e.message}`))
    )
  )
