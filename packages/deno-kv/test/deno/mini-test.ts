// A test runner small enough to bundle into a Deno program: the `TestApi` the conformance suite
// takes (describe, it, afterAll) and the four matchers of its `Expectation`, with vitest's
// meanings (toBe: Object.is; toEqual: deep, properties holding undefined count as absent).
// vitest itself does not run in Deno; this runs the same suite there, test by test, in order.
import type { Expectation, TestApi } from '@floodgate/testkit';

interface Case {
  readonly name: string;
  readonly fn: () => Promise<void>;
  readonly timeoutMs: number;
}

/** What a run reports, as the last line of its output (JSON). */
export interface Summary {
  readonly passed: number;
  readonly failed: number;
  readonly failures: readonly { readonly name: string; readonly error: string }[];
}

function equal(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => equal(x, bb[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(rb, k) && equal(ra[k], rb[k]));
}

const show = (x: unknown) =>
  JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)) ?? String(x);

export function expect(actual: unknown, message?: string): Expectation {
  const check = (ok: boolean, what: string, expected: unknown) => {
    if (!ok) {
      throw new Error(`${message ?? 'expect'}: expected ${show(actual)} ${what} ${show(expected)}`);
    }
  };
  return {
    toBe: (expected) => check(Object.is(actual, expected), 'to be', expected),
    toEqual: (expected) => check(equal(actual, expected), 'to equal', expected),
    toBeGreaterThanOrEqual: (n) => check((actual as number) >= n, 'to be >=', n),
    toBeLessThanOrEqual: (n) => check((actual as number) <= n, 'to be <=', n),
  };
}

/** A fresh runner: register with `api`, then `run()`. */
export function miniTest(): { api: TestApi; run(): Promise<Summary>; readonly registered: number } {
  const cases: Case[] = [];
  const after: (() => unknown)[] = [];
  const path: string[] = [];
  const api: TestApi = {
    describe(name, fn) {
      path.push(name);
      try {
        fn();
      } finally {
        path.pop();
      }
    },
    it(name, fn, timeoutMs = 60_000) {
      cases.push({ name: [...path, name].join(' > '), fn, timeoutMs });
    },
    expect,
    afterAll(fn) {
      after.push(fn);
    },
  };
  async function run(): Promise<Summary> {
    let passed = 0;
    const failures: { name: string; error: string }[] = [];
    for (const c of cases) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${c.timeoutMs} ms`)),
          c.timeoutMs,
        );
      });
      try {
        await Promise.race([c.fn(), timeout]);
        passed++;
      } catch (error) {
        failures.push({
          name: c.name,
          error: error instanceof Error ? error.message : String(error),
        });
      } finally {
        clearTimeout(timer);
      }
    }
    for (const fn of after) await fn();
    return { passed, failed: failures.length, failures };
  }
  return {
    api,
    run,
    get registered() {
      return cases.length;
    },
  };
}
