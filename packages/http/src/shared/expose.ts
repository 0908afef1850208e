/**
 * The names a decision's headers give `Access-Control-Expose-Headers`, interned: an app's
 * engines format a handful of distinct header sets (one per `headers` option, allowed or
 * denied), so each request reuses one frozen list instead of a fresh `Object.keys` array, and
 * the list's joined form is worked out once. Frozen because it is shared across requests.
 */

// A handful of lists, compared by their names in order: a Map keyed by the joined names would
// cost a join per request, which is what this saves.
const MAX_INTERNED = 8;
const interned: (readonly string[])[] = [];
// The `, `-joined list, for the interned lists whose names need no merging (see `plainNames`);
// `null`: they do.
const joinedOf = new WeakMap<readonly string[], string | null>();

/** Whether `headers`' own enumerable names are `names`, in that order. */
function sameNames(headers: Record<string, string>, names: readonly string[]): boolean {
  let i = 0;
  for (const name in headers) {
    if (names[i] !== name) return false;
    i++;
  }
  return i === names.length;
}

/**
 * The names of `headers`, in order, as a frozen list: the same array for the same names, while
 * at most 8 distinct lists have been seen (then a fresh frozen one each time).
 */
export function exposeNamesOf(headers: Record<string, string>): readonly string[] {
  for (let i = 0; i < interned.length; i++) {
    const names = interned[i] as readonly string[];
    if (sameNames(headers, names)) return names;
  }
  const names = Object.freeze(Object.keys(headers));
  if (interned.length < MAX_INTERNED) {
    interned.push(names);
    joinedOf.set(names, plainNames(names) ? names.join(', ') : null);
  }
  return names;
}

/**
 * `names` joined with `, ` when that is how merging them into an empty list writes them (see
 * `plainNames`), else `undefined`; read from the intern table for an interned list.
 */
export function joinedNames(names: readonly string[]): string | undefined {
  const known = joinedOf.get(names);
  if (known !== undefined) return known ?? undefined;
  return plainNames(names) ? names.join(', ') : undefined;
}

/**
 * Whether the names join to what the general merge would make of them: each a bare token (no
 * comma, no surrounding space, not empty) and no two equal ignoring case (a handful of names:
 * pairwise is cheapest).
 */
function plainNames(names: readonly string[]): boolean {
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (name === '' || name.includes(',') || name.trim() !== name) return false;
    const a = name.toLowerCase();
    for (let j = 0; j < i; j++) if ((names[j] as string).toLowerCase() === a) return false;
  }
  return true;
}
