import { FloodgateError } from '@floodgate/core';
import { printWarning } from '@floodgate/core/internal';
import { createSlot } from './slot.js';

/**
 * The stable codes of the configuration warnings, each explained under its own heading in
 * docs/http.md.
 * @example
 * ```ts
 * import type { WarningCode } from '@floodgate/http';
 *
 * const expected: WarningCode = 'UNTRUSTED_X_FORWARDED_FOR';
 * ```
 * @public
 */
export type WarningCode =
  | 'UNVERIFIED_HEADER_KEY'
  | 'UNTRUSTED_X_FORWARDED_FOR'
  | 'PERMISSIVE_TRUST_PROXY'
  | 'UNKNOWN_CLIENT_ADDRESS'
  | 'ALLOW_LIST_WITHOUT_IP_KEY';

const CODES: readonly WarningCode[] = [
  'UNVERIFIED_HEADER_KEY',
  'UNTRUSTED_X_FORWARDED_FOR',
  'PERMISSIVE_TRUST_PROXY',
  'UNKNOWN_CLIENT_ADDRESS',
  'ALLOW_LIST_WITHOUT_IP_KEY',
];

const DOCS = 'https://github.com/floodgate/floodgate/blob/main/docs/http.md';

/**
 * A configuration that works but is probably not what was meant: each one lets clients share a
 * bucket or pick their own. Given to `onWarning`, or written as a process warning.
 * @example
 * ```ts
 * import type { RateLimitWarning } from '@floodgate/http';
 *
 * function log(warning: RateLimitWarning): void {
 *   console.error(`[${warning.code}] ${warning.message} (${warning.help})`);
 * }
 * ```
 * @public
 */
export interface RateLimitWarning {
  readonly code: WarningCode;
  readonly message: string;
  /** The docs/http.md section that explains the warning and its fix. */
  readonly help: string;
}

/**
 * `false` silences every warning, `true` (the default) enables them all, and an object turns
 * single codes off (`{ UNTRUSTED_X_FORWARDED_FOR: false }`).
 * @example
 * ```ts
 * import type { ValidateOption } from '@floodgate/http';
 *
 * // The gateway in front verifies API keys and strips the header otherwise.
 * const validate: ValidateOption = { UNVERIFIED_HEADER_KEY: false };
 * ```
 * @public
 */
export type ValidateOption = boolean | Partial<Record<WarningCode, boolean>>;

/** Says each warning once: per middleware, or per process for requests no middleware saw. */
export interface Validator {
  warn(code: WarningCode, message: string): void;
}

// Printed the way every Floodgate package prints: a process warning where it is known to print
// (Node, Bun, Deno), else the console (workerd has an emitWarning that prints nothing).
function emit(warning: RateLimitWarning): void {
  printWarning(warning.code, `${warning.message} See ${warning.help}`);
}

/**
 * Builds a validator from the `validate` and `onWarning` options. Throws
 * `FloodgateError('INVALID_OPTION')` on a value it cannot read.
 */
export function createValidator(
  validate: ValidateOption | undefined,
  onWarning: ((warning: RateLimitWarning) => void) | undefined,
): Validator {
  if (onWarning !== undefined && typeof onWarning !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'onWarning must be a function');
  }
  const enabled = new Map<WarningCode, boolean>(CODES.map((c) => [c, validate !== false]));
  if (typeof validate === 'object' && validate !== null) {
    for (const [code, on] of Object.entries(validate)) {
      if (!CODES.includes(code as WarningCode) || typeof on !== 'boolean') {
        throw new FloodgateError(
          'INVALID_OPTION',
          `validate: ${JSON.stringify(code)} must be one of ${CODES.join(', ')}, set to true or false`,
        );
      }
      enabled.set(code as WarningCode, on);
    }
  } else if (validate !== undefined && typeof validate !== 'boolean') {
    throw new FloodgateError(
      'INVALID_OPTION',
      'validate must be true, false, or an object of warning codes',
    );
  }
  const said = new Set<WarningCode>();
  const report = onWarning ?? emit;
  return {
    warn(code, message) {
      if (said.has(code) || !enabled.get(code)) return;
      said.add(code);
      report({ code, message, help: `${DOCS}#${code.toLowerCase()}` });
    },
  };
}

const processWide = createValidator(true, undefined);
const bound = createSlot<Validator>('floodgate.validator');

/** The middleware deciding this request says its warnings through `validator`. */
export function bindValidator(request: object, validator: Validator): void {
  bound.set(request, validator);
}

/**
 * Warns, once, through the validator of the middleware deciding `request` (a request view
 * built outside a middleware warns once per process).
 */
export function warnOnce(request: object, code: WarningCode, message: string): void {
  (bound.get(request) ?? processWide).warn(code, message);
}

/** The runtime this process runs on, for messages: where to look for the client address. */
export function runtimeName(): string {
  const g = globalThis as {
    Bun?: unknown;
    Deno?: unknown;
    navigator?: { userAgent?: string };
    process?: { versions?: { node?: string } };
  };
  if (g.Bun !== undefined) return 'Bun';
  if (g.Deno !== undefined) return 'Deno';
  if (g.navigator?.userAgent === 'Cloudflare-Workers') return 'Cloudflare Workers (workerd)';
  if (g.process?.versions?.node !== undefined) return `Node.js ${g.process.versions.node}`;
  return 'an unknown runtime';
}
