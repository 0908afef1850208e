// How every `@floodgate/*` package prints a configuration warning, on every runtime it claims.
// `process.emitWarning` is the right channel where it prints: `--no-warnings` and a 'warning'
// listener still control it. But a function of that name is no proof that it prints: workerd
// (nodejs_compat, the default from 2026-08-04) has `process.emitWarning`, `process.release.name`
// 'node' and a `process.versions.node`, and its emitWarning prints nothing. So it is used only
// where a runtime says, by a mark of its own, that it is Node, Bun or Deno (each checked to
// print it); everywhere else the console, which every runtime prints.

interface ProcessLike {
  emitWarning?: (warning: string, options: { type: string; code: string }) => void;
  release?: { name?: unknown };
  versions?: { bun?: unknown; deno?: unknown };
}

/** `process` where its `emitWarning` is known to print, else `undefined`. */
function printingProcess(): ProcessLike | undefined {
  const g = globalThis as { process?: ProcessLike; navigator?: { userAgent?: unknown } };
  const proc = g.process;
  if (typeof proc?.emitWarning !== 'function') return undefined;
  if (typeof proc.versions?.bun === 'string' || typeof proc.versions?.deno === 'string') {
    return proc;
  }
  // Node 21+ says `Node.js/<version>` in navigator.userAgent; Node 20 has no navigator. A shim
  // that claims to be Node (workerd says 'Cloudflare-Workers') fails one or the other.
  const agent = g.navigator?.userAgent;
  const node =
    proc.release?.name === 'node' &&
    (g.navigator === undefined || (typeof agent === 'string' && agent.startsWith('Node.js/')));
  return node ? proc : undefined;
}

/**
 * Prints a Floodgate warning, each time it is called: a `FloodgateWarning` process warning on
 * Node, Bun and Deno, `console.warn` elsewhere (workerd, browsers). For callers that decide for
 * themselves how often a warning is said (`@floodgate/http` says each once per middleware).
 * @example
 * ```ts
 * import { printWarning } from '@floodgate/core/internal';
 *
 * printWarning('SHORT_INTERVAL', 'interval: 60 is 60 ms; write "60s" for seconds.');
 * ```
 * @internal
 */
export function printWarning(code: string, message: string): void {
  const proc = printingProcess();
  if (proc?.emitWarning !== undefined) {
    proc.emitWarning(message, { type: 'FloodgateWarning', code });
  } else {
    console.warn(`FloodgateWarning [${code}]: ${message}`);
  }
}

const said = new Set<string>();

/**
 * Prints a Floodgate warning the first time its `code` is seen in this process (or isolate),
 * as {@link printWarning} does; later calls with that code print nothing.
 * @example
 * ```ts
 * import { warnOnce } from '@floodgate/core/internal';
 *
 * warnOnce('SHORT_INTERVAL', 'interval: 60 is 60 ms; write "60s" for seconds.');
 * warnOnce('SHORT_INTERVAL', 'said already: not printed');
 * ```
 * @internal
 */
export function warnOnce(code: string, message: string): void {
  if (said.has(code)) return;
  said.add(code);
  printWarning(code, message);
}
