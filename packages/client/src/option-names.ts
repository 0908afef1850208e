// The one unknown-option check of this package's options objects, so that a typo or a peer
// library's name (`{ maxRetries: 5 }`) throws, as the server side's options do, instead of being
// ignored without a word. Kept small: the bundle has a size budget (README, "Size").
import { invalidOption } from './errors.js';

/** The declaration of an options type's names: one `true` per key, held to the type. */
export type Names<T> = { readonly [K in keyof T]-?: true };

/**
 * Throws `RetryError` `INVALID_OPTION` for the first own key of `options` that is neither in
 * `names` nor a key of `known`: `<label>: unknown option "<key>"`, with `(Floodgate's way: …)`
 * when `hints` has the key.
 */
export function checkNames(
  label: string,
  options: object,
  names: readonly string[],
  known: object = {},
  hints: Readonly<Record<string, string>> = {},
): void {
  for (const key of Object.keys(options)) {
    // Object.hasOwn, not `in`: 'toString' or '__proto__' are no option's name.
    if (!names.includes(key) && !Object.hasOwn(known, key)) {
      const hint = Object.hasOwn(hints, key) ? ` (Floodgate's way: ${hints[key]})` : '';
      throw invalidOption(`${label}: unknown option "${key}"${hint}`);
    }
  }
}
