// The one "unknown option" check every options object of the `@floodgate/*` packages goes
// through, so a typo such as `{ limt: 5 }` fails the same way everywhere, before any store is
// touched. The names come from a declaration the compiler holds to the options interface.
import { FloodgateError, type FloodgateErrorCode } from './errors.js';

/**
 * The declaration of an options interface's names: one `true` per key of `T`, no more, no less.
 * Written as `{ ... } as const satisfies OptionNames<XOptions>`, it stops compiling when `T`
 * gains a key the declaration misses, or when it lists a name `T` does not have.
 * @internal
 * @example
 * ```ts
 * import { type OptionNames } from '@floodgate/core/internal';
 *
 * interface PingOptions {
 *   everyMs?: number;
 *   onPong?: () => void;
 * }
 * const PING_OPTIONS = { everyMs: true, onPong: true } as const satisfies OptionNames<PingOptions>;
 * ```
 */
export type OptionNames<T> = { readonly [K in keyof T]-?: true };

/**
 * Throws `FloodgateError` (`INVALID_OPTION` unless `extra.code` says otherwise) for the first own
 * enumerable key of `options` that `names` does not hold: `<label>: unknown option "<key>"`,
 * followed by `extra.hint(key)` when given. An empty `label` drops the prefix.
 * @internal
 * @example
 * ```ts
 * import { checkOptions, type OptionNames } from '@floodgate/core/internal';
 *
 * interface PingOptions {
 *   everyMs?: number;
 * }
 * const PING_OPTIONS = { everyMs: true } as const satisfies OptionNames<PingOptions>;
 * checkOptions('ping', { everyMs: 5 }, PING_OPTIONS); // passes
 * checkOptions('ping', { everyMS: 5 }, PING_OPTIONS); // throws: ping: unknown option "everyMS"
 * ```
 */
export function checkOptions(
  label: string,
  options: object,
  names: Readonly<Record<string, true>> | readonly string[],
  extra?: { code?: FloodgateErrorCode; hint?: (key: string) => string },
): void {
  const list = Array.isArray(names) ? (names as readonly string[]) : undefined;
  for (const key of Object.keys(options)) {
    // Object.hasOwn, not `in`: 'toString' or '__proto__' are no option's name.
    if (list === undefined ? Object.hasOwn(names, key) : list.includes(key)) continue;
    const hint = extra?.hint?.(key) ?? '';
    throw new FloodgateError(
      extra?.code ?? 'INVALID_OPTION',
      `${label === '' ? '' : `${label}: `}unknown option "${key}"${hint}`,
    );
  }
}
