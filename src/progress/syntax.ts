// Kept apart from the matcher so config validation (on every hot command) loads no file walker.

/**
 * Why a pattern uses syntax this matcher does not implement, or null when it is supported.
 * Brace sets (`{a,b}`), negation (`!x`) and extglobs (`@(x)`, `+(x)`…) would otherwise match
 * nothing silently, and a fingerprint of nothing never moves (issue 11), so config rejects them.
 */
export function unsupportedGlobSyntax(pattern: string): string | null {
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "!" && i === 0) return "a leading `!` (negation) is not supported";
    if (c === "{" || c === "}")
      return "brace sets like `{a,b}` are not supported: list each pattern";
    if ("@+!*?".includes(c) && pattern[i + 1] === "(")
      return `extglobs like \`${c}(…)\` are not supported`;
  }
  return null;
}
