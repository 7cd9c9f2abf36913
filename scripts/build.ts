/**
 * The production build (npm run build): src/main.ts bundled by esbuild into dist/ as ES modules,
 * with the admin commands' and `serve`'s lazy imports kept lazy (code splitting). Packages stay
 * outside the bundle (`packages: "external"`): node_modules is installed beside dist/ at run time, so
 * pdfkit's fonts, oidc-provider and the embedded PostgreSQL binaries load from their own folders.
 * Files read at run time from the project (docs/api/*.md) are found from package.json's folder.
 *
 * The build fails when the bundle imports a package that is not in `dependencies`: a production
 * install (`npm ci --omit=dev`, as the Dockerfile does) would not have it.
 */
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import { builtinModules } from "node:module"

const outdir = "dist"
fs.rmSync(outdir, { recursive: true, force: true })

const result = await esbuild.build({
  entryPoints: { main: "src/main.ts" },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  packages: "external",
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: "linked",
  metafile: true,
  logLevel: "warning"
})

const packageJson = JSON.parse(fs.readFileSync("package.json", "utf8")) as { dependencies: Record<string, string> }
const builtins = new Set(builtinModules)
/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")
const missing = new Set<string>()
for (const output of Object.values(result.metafile.outputs)) {
  for (const imported of output.imports) {
    if (!imported.external || imported.path.startsWith("node:") || builtins.has(imported.path)) continue
    // The embedded PostgreSQL's platform package is imported by a computed name (optional dependency).
    if (imported.path.includes("${")) continue
    const name = packageOf(imported.path)
    if (!(name in packageJson.dependencies)) missing.add(name)
  }
}
if (missing.size > 0) {
  console.error(
    `dist/ imports packages that are not dependencies (a production install lacks them): ${[...missing].join(", ")}`
  )
  process.exit(1)
}
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0)
console.log(`dist/: ${Object.keys(result.metafile.outputs).length} files, ${(bytes / 1e6).toFixed(1)} MB`)
