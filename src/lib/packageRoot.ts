/**
 * The folder of this project's package.json, found upward from a module's URL: the repository root
 * when running the sources (src/…) and the install folder when running the build (dist/…), so a file
 * shipped beside the code (docs/api/*.md) is found from either.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const packageRoot = (moduleUrl: string): string => {
  let dir = path.dirname(fileURLToPath(moduleUrl))
  while (!fs.existsSync(path.join(dir, "package.json"))) {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(moduleUrl)}`)
    dir = parent
  }
  return dir
}
