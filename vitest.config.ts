import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    // CI also writes a machine-readable result that .ci/run turns into its closing line.
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".ci/results.json" }]] : ["default"],
    hookTimeout: 120_000,
    // Each file gets its own database on the shared server; two workers suit a 2-core machine.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
