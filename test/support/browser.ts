/** Headless Chromium for browser tests (the Debian `chromium` package, driven by playwright-core). */
import { Effect } from "effect"
import { type Browser, chromium } from "playwright-core"

/** Where Chromium is: CHROMIUM_PATH, or the Debian package's binary. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/** A headless Chromium for the scope. */
export const browser = Effect.acquireRelease(
  Effect.tryPromise({
    try: () => chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
    catch: (e) =>
      new Error(
        `headless Chromium did not start from ${CHROMIUM} (install the Debian package: apt-get install chromium; or set CHROMIUM_PATH): ${e}`
      )
  }).pipe(Effect.orDie),
  (b: Browser) => Effect.promise(() => b.close())
)
