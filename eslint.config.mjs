// Lint and format (npm run lint; .ci/run runs it): the Effect team's habit — typescript-eslint's
// recommended rules and @effect/eslint-plugin's dprint formatter with the settings the Effect repository
// uses (2 spaces, 120 columns, no semicolons, double quotes, no trailing commas).
import * as effectEslint from "@effect/eslint-plugin"
import eslint from "@eslint/js"
import tseslint from "typescript-eslint"

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      ".data/",
      "bench/.data/",
      "dist/",
      ".ci/*",
      "!.ci/conformance/",
      ".ci/conformance/node_modules/",
      "coverage/",
      "examples/**/*.js"
    ]
  },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  ...effectEslint.configs.dprint,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      // Control characters are matched on purpose: stripped from email headers, ticket lines and
      // echoed input, refused in desk fields.
      "no-control-regex": "off",
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  },
  {
    // Tests and benchmarks read JSON answers and raw rows whose shape they then assert: `any` is the
    // honest type there.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: { "@typescript-eslint/no-explicit-any": "off" }
  }
)
