// docs/api.md is the protocol page a client in another language (Python)
// follows: these tests hold it to what this client uses and to what the
// scheduler serves.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { Codes, JetschedError } from "../src/index.js";
import { noServer, open } from "./helpers.js";

// Compiled to dist/test/: the package is two folders up, the repository four.
const apiDoc = process.env.JETSCHED_API_DOC ?? new URL("../../../../docs/api.md", import.meta.url).pathname;
const clientSource = new URL("../../src/client.ts", import.meta.url).pathname;

/** rows are the first cells (backticks stripped) of the table rows under the heading. */
function rows(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `docs/api.md has a section "${heading}"`);
  const section = markdown.slice(start + heading.length + 2).split(/\n## /)[0]!;
  const out: string[] = [];
  for (const line of section.split("\n")) {
    const m = /^\| `([^`]+)` \|/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}

const doc = readFileSync(apiDoc, "utf8");
const verbs = rows(doc, "## Endpoints").map((s) => s.replace(/^sched\.api\./, ""));
const codes = rows(doc, "## Errors");

describe("docs/api.md", () => {
  test("lists every verb the client calls", () => {
    const used = new Set([...readFileSync(clientSource, "utf8").matchAll(/"((?:schedule|wakeup|calendar)\.[a-z.]+|status)"/g)].map((m) => m[1]!));
    assert.ok(used.size >= 10, `found the client's verbs: ${[...used].join(", ")}`);
    for (const v of used) assert.ok(verbs.includes(v), `docs/api.md's endpoint table lists ${v} (it lists ${verbs.join(", ")})`);
  });

  test("lists the error codes the client knows, and no other", () => {
    assert.deepEqual([...codes].sort(), Object.values(Codes).sort());
  });

  test("every verb it lists is served", { skip: noServer }, async (t) => {
    const { client } = await open(t);
    assert.ok(verbs.length >= 20, `parsed ${verbs.length} verbs`);
    for (const v of verbs) {
      // An empty request: refused as invalid (or answered), never "no such verb".
      try {
        await client.call(v, {});
      } catch (e) {
        assert.ok(e instanceof JetschedError, `${v}: ${String(e)}`);
        assert.ok(!(e.code === Codes.notFound && e.field === "verb"), `${v} is no verb of the scheduler: ${e.message}`);
      }
    }
  });
});
