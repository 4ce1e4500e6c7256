// The manual (issue 17): the README stays a first page, every relative link and #anchor in the
// docs resolves, and docs/commands.md documents every command's options exactly as its --help
// prints them (both come from src/cli-spec.ts; this holds the page to them).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMAND_SPECS } from "../src/cli-spec.js";
import { DEFAULTS } from "../src/config/schema.js";
import { PAGE_KINDS } from "../src/page/compose.js";
import { claudeSettings } from "../src/usage/claude-settings.js";
import { EFFECT_KINDS } from "../src/watchdog/rules/effects.js";
import { sheepdog, tempDir } from "./helpers/cli.js";

const ROOT = resolve(import.meta.dirname, "..");
const DOCS = readdirSync(join(ROOT, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => `docs/${f}`);
const PAGES = ["README.md", "CONTRIBUTING.md", ...DOCS, "launchd/README.md", "systemd/README.md"];
const README_MAX_LINES = 250;

const read = (file: string) => readFileSync(file, "utf8");

/** The lines of a Markdown file outside fenced code blocks (``` or ~~~), with their numbers. */
function prose(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((line, i) => {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (m?.[1]) {
      if (fence === null) fence = m[1];
      else if (m[1][0] === fence[0] && m[1].length >= fence.length) fence = null;
      return;
    }
    if (fence === null) out.push({ line, n: i + 1 });
  });
  return out;
}

/** GitHub's heading anchor: lowercase, keep letters, digits, spaces, `-` and `_`, spaces → `-`. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a file's headings make, duplicates numbered `-1`, `-2` as GitHub does. */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of prose(read(file))) {
    const m = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (!m?.[1]) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** The broken relative links of one page, each described with its file and line. */
function brokenLinks(page: string): string[] {
  const broken: string[] = [];
  for (const { line, n } of prose(read(join(ROOT, page)))) {
    const text = line.replace(/(`+)[\s\S]*?\1/g, "``"); // a code span holds no link
    for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1] ?? "";
      if (/^(https?:|mailto:)/i.test(target)) continue;
      const [path = "", anchor] = target.split("#", 2);
      const file = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), path);
      const where = `${page}:${n}: ${m[0]}`;
      if (!existsSync(file)) {
        broken.push(`${where}: no file ${relative(ROOT, file)}`);
        continue;
      }
      if (anchor === undefined || anchor === "") continue;
      if (statSync(file).isDirectory() || !file.endsWith(".md")) {
        broken.push(
          `${where}: #${anchor} points into ${relative(ROOT, file)}, not a Markdown page`,
        );
      } else if (!anchors(file).has(anchor)) {
        broken.push(`${where}: no heading makes #${anchor} in ${relative(ROOT, file)}`);
      }
    }
  }
  return broken;
}

interface HelpOption {
  option: string;
  meaning: string;
}

/** `sheepdog NAME --help`: its usage lines and its options, continuation lines joined. */
function help(name: string): { usage: string[]; options: HelpOption[] } {
  const r = sheepdog([name, "--help"]);
  expect(r.code, `sheepdog ${name} --help: ${r.stderr}`).toBe(0);
  const lines = r.stdout.split("\n");
  const usage: string[] = [];
  for (let i = lines.indexOf("usage:") + 1; lines[i]?.startsWith("  "); i++) {
    usage.push((lines[i] ?? "").trim());
  }
  const options: HelpOption[] = [];
  for (const line of lines.slice(lines.indexOf("options:") + 1)) {
    const row = /^ {2}(--\S+(?: \S+)?) {2,}(\S.*)$/.exec(line);
    const last = options[options.length - 1];
    if (row?.[1] && row[2]) options.push({ option: row[1], meaning: row[2] });
    else if (last && /^ {4,}\S/.test(line)) last.meaning += ` ${line.trim()}`;
  }
  return { usage, options: options.map((o) => ({ ...o, meaning: squash(o.meaning) })) };
}

const squash = (s: string) => s.replace(/\s+/g, " ").trim();
/** A table cell's text: `\|` (and any other Markdown backslash escape) as the character. */
const unescapeCell = (s: string) => s.replace(/\\([!-/:-@[-`{-~])/g, "$1");

/** docs/commands.md's `## sheepdog NAME` sections, by name. */
function commandSections(): Map<string, string> {
  const sections = new Map<string, string>();
  const text = read(join(ROOT, "docs/commands.md"));
  for (const part of text.split(/^## /m).slice(1)) {
    const heading = part.slice(0, part.indexOf("\n")).trim();
    const m = /^sheepdog (\S+)$/.exec(heading);
    if (m?.[1]) sections.set(m[1], part);
  }
  return sections;
}

/** The rows of a section's `| option | meaning |` table. */
function optionTable(section: string): HelpOption[] | null {
  const lines = section.split("\n");
  const start = lines.findIndex((l) => /^\|\s*option\s*\|\s*meaning\s*\|\s*$/.test(l));
  if (start < 0) return null;
  const rows: HelpOption[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line
      .trim()
      .replace(/^\||\|$/g, "")
      .split(/(?<!\\)\|/)
      .map((c) => unescapeCell(c.trim()));
    rows.push({ option: (cells[0] ?? "").replace(/^`|`$/g, ""), meaning: squash(cells[1] ?? "") });
  }
  return rows;
}

describe("the docs", () => {
  it(`README.md is a first page: at most ${README_MAX_LINES} lines, with the two commands`, () => {
    const readme = read(join(ROOT, "README.md"));
    const lines = readme.replace(/\n$/, "").split("\n").length;
    expect(lines, `README.md has ${lines} lines; move detail to docs/`).toBeLessThanOrEqual(
      README_MAX_LINES,
    );
    for (const command of ["npm ci && npm run demo", "npm test"]) {
      expect(readme.includes(command), `README.md must show \`${command}\` verbatim`).toBe(true);
    }
  });

  it("the README's manual links every page of docs/ and CONTRIBUTING.md", () => {
    const readme = read(join(ROOT, "README.md"));
    const missing = [...DOCS, "CONTRIBUTING.md"].filter((p) => !readme.includes(`](${p})`));
    expect(missing, "pages the README does not link").toEqual([]);
  });

  it.each(PAGES)("every relative link and #anchor in %s resolves", (page) => {
    expect(existsSync(join(ROOT, page)), `${page} is missing`).toBe(true);
    expect(brokenLinks(page)).toEqual([]);
  });

  describe("docs/commands.md documents each command as its --help does", () => {
    const sections = commandSections();
    it.each(Object.keys(COMMAND_SPECS))("sheepdog %s", (name) => {
      const section = sections.get(name);
      expect(section, `docs/commands.md has no "## sheepdog ${name}" section`).toBeDefined();
      const { usage, options } = help(name);
      for (const line of usage) {
        expect(
          section?.includes(`\n${line}\n`),
          `docs/commands.md, sheepdog ${name}: the usage line "${line}" (from --help) is missing`,
        ).toBe(true);
      }
      const table = optionTable(section ?? "");
      expect(table, `docs/commands.md, sheepdog ${name}: no "| option | meaning |" table`).not.toBe(
        null,
      );
      const documented = new Map((table ?? []).map((r) => [r.option, r.meaning]));
      const problems: string[] = [];
      for (const { option, meaning } of options) {
        const doc = documented.get(option);
        if (doc === undefined) problems.push(`${option}: in --help, missing from the table`);
        else if (doc !== meaning) {
          problems.push(`${option}: the table says "${doc}", --help says "${meaning}"`);
        }
      }
      const inHelp = new Set(options.map((o) => o.option));
      for (const option of documented.keys()) {
        if (!inHelp.has(option)) problems.push(`${option}: in the table, not in --help`);
      }
      expect(problems, `docs/commands.md, sheepdog ${name}`).toEqual([]);
    });
  });
});

describe("what the docs say of the code (issue 30)", () => {
  it("the defaults docs/commands.md spells out are what init writes and what the schema fills in", () => {
    const page = read("docs/commands.md");
    const at = page.indexOf("## sheepdog init");
    const block = /```json\n([\s\S]*?)\n```/.exec(page.slice(at))?.[1];
    expect(block, "a json block in the init section").toBeDefined();
    const documented = JSON.parse(block as string);
    const dir = tempDir();
    expect(sheepdog(["init", join(dir, "demo")]).code).toBe(0);
    const written = JSON.parse(read(join(dir, "demo", "program.json")));
    for (const key of ["watchdog", "hand_over_tokens", "usage"]) {
      expect(documented[key], key).toEqual(written[key]);
      expect(documented[key], key).toEqual(DEFAULTS[key as keyof typeof DEFAULTS]);
    }
  });

  it("the defaults the rules quote are the schema's", () => {
    const rules = read("docs/rules.md");
    const w = DEFAULTS.watchdog;
    expect(rules).toContain(`\`stale_after\` (${w.stale_after})`);
    expect(rules).toContain(`\`claim_grace\` (${w.claim_grace})`);
    expect(rules).toContain(`\`watchdog.quiet_after\` (${w.quiet_after})`);
    expect(rules).toContain(`\`nudge_wait\` (${w.nudge_wait})`);
    expect(rules).toContain(
      `${w.crash_loop.starts} unplanned starts (\`crash_loop.starts\`)\n  already happened within ${w.crash_loop.within} (\`crash_loop.within\`)`,
    );
  });

  it("docs/rules.md names every effect the code has, and docs/pages.md every kind of page", () => {
    const rules = read("docs/rules.md");
    const effects = rules.slice(rules.indexOf("## Effects"));
    for (const kind of EFFECT_KINDS)
      expect(effects, `effect ${kind}`).toMatch(new RegExp(`^\\| \`${kind}\` \\|`, "m"));
    const pages = read("docs/pages.md");
    const table = pages.slice(pages.indexOf("## What pages when"));
    for (const kind of [...PAGE_KINDS, "recovered"])
      expect(table, `page kind ${kind}`).toMatch(new RegExp(`^\\| \`${kind}\` \\|`, "m"));
  });
});

describe("the README's Claude Code settings", () => {
  it("are the snippet init and doctor show (one source: claudeSettings)", () => {
    const readme = readFileSync("README.md", "utf8");
    const section = readme.slice(readme.indexOf("## Claude Code settings"));
    const block = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
    expect(block).toBeDefined();
    expect(JSON.parse(block as string)).toEqual(claudeSettings());
  });
});
