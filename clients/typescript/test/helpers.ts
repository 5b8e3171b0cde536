// Helpers of the tests: they run against a real scheduler and nats-server
// whose URL is in NATS_URL (integration/tsclient_test.go starts both).
// Waits poll for a positive signal until a deadline; nothing sleeps and
// then asserts.

import { randomBytes } from "node:crypto";
import type { TestContext } from "node:test";

import { connect, type Msg, type NatsConnection } from "@nats-io/transport-node";

import { Client } from "../src/index.js";

/** The server's URL; tests that need it skip without it (the Go test always sets it). */
export const url = process.env.NATS_URL ?? "";
export const noServer = url ? false : "NATS_URL is not set: run the tests through `go test ./integration -run TestTypeScriptClient`, or against a running `scheduler run`";

/** open connects to the server and closes the connection when the test ends. */
export async function open(t: TestContext): Promise<{ nc: NatsConnection; client: Client }> {
  const nc = await connect({ servers: url, name: `jetsched-ts-test ${t.name}` });
  t.after(() => nc.close());
  return { nc, client: new Client(nc, { actor: "ts-test" }) };
}

/** unique is a name no other test uses: "<base>-<8 hex digits>". */
export function unique(base: string): string {
  return `${base}-${randomBytes(4).toString("hex")}`;
}

/** waitFor calls probe until it returns a value other than undefined, or fails after ms. */
export async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`waited ${ms}ms for ${what}${last ? `; last error: ${String(last)}` : ""}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Messages collects the messages of a subscription so a test can wait for one. */
export class Messages {
  readonly got: Msg[] = [];
  readonly #waiters: (() => void)[] = [];

  constructor(nc: NatsConnection, subject: string) {
    nc.subscribe(subject, {
      callback: (err, m) => {
        if (err) return;
        this.got.push(m);
        for (const w of this.#waiters.splice(0)) w();
      },
    });
  }

  /** next resolves with the first message (old or new) that match accepts, or rejects after ms. */
  async next(what: string, ms: number, match: (m: Msg) => boolean): Promise<Msg> {
    const deadline = Date.now() + ms;
    for (;;) {
      const m = this.got.find(match);
      if (m) return m;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`waited ${ms}ms for ${what}; got ${this.got.length} other messages: ${this.got.map((x) => x.subject + " " + x.string()).join("; ")}`);
      await new Promise<void>((res) => {
        const t = setTimeout(res, left);
        this.#waiters.push(() => {
          clearTimeout(t);
          res();
        });
      });
    }
  }
}

/** triggerWhenPlanned triggers a schedule once a scheduler has planned it (refused until then). */
export async function triggerWhenPlanned(client: Client, id: string): Promise<string> {
  return waitFor(`a trigger of ${id} accepted`, 15_000, () => client.trigger(id, { note: "ts test" }));
}
