// Upstash takes a shebang flag redis-server does not know: `#!lua flags=allow-key-locking`, which
// every script of @upstash/ratelimit carries (Upstash lets such a script lock only its keys;
// redis-server runs every script alone anyway, which is at least as strict). redis-server refuses
// the script ("Unexpected flag in script shebang"), so the bridge drops the flag on the way in.
// The client addresses the script by the SHA1 of the text it sent, redis-server caches it under
// the SHA1 of the text it got: the bridge maps one to the other, in EVALSHA, SCRIPT EXISTS and the
// reply to SCRIPT LOAD, so EVALSHA and NOSCRIPT behave as on Upstash.
import { createHash } from 'node:crypto';
import type { Reply } from './redis-http-bridge-resp.js';

/** Flags Upstash accepts that redis-server does not. */
const UPSTASH_ONLY_FLAGS = new Set(['allow-key-locking']);

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

/** The script without Upstash's own shebang flags, or undefined when it has none. */
function withoutUpstashFlags(script: string): string | undefined {
  if (!script.startsWith('#!')) return undefined;
  const eol = script.indexOf('\n');
  const first = eol < 0 ? script : script.slice(0, eol);
  const tokens = first.split(' ');
  let changed = false;
  const kept = tokens.flatMap((token) => {
    if (!token.startsWith('flags=')) return [token];
    const flags = token.slice('flags='.length).split(',');
    const rest = flags.filter((f) => !UPSTASH_ONLY_FLAGS.has(f));
    if (rest.length === flags.length) return [token];
    changed = true;
    return rest.length === 0 ? [] : [`flags=${rest.join(',')}`];
  });
  return changed ? kept.join(' ') + (eol < 0 ? '' : script.slice(eol)) : undefined;
}

/** A command as redis-server gets it, and how to turn its reply into the client's view. @internal */
export interface Prepared {
  readonly args: string[];
  readonly reply?: (reply: Reply) => Reply;
}

/** The bridge's map from the SHA1s clients know to those redis-server knows, for one bridge. @internal */
export class ScriptShas {
  readonly #toServer = new Map<string, string>();

  /** Rewrites `args` where a script or a script's SHA1 is concerned; the rest as it is. */
  prepare(args: string[]): Prepared {
    const name = args[0]!.toLowerCase();
    if ((name === 'eval' || name === 'eval_ro') && args.length > 1) {
      const script = this.#load(args[1]!);
      return script === undefined ? { args } : { args: [args[0]!, script, ...args.slice(2)] };
    }
    if ((name === 'evalsha' || name === 'evalsha_ro') && args.length > 1) {
      return { args: [args[0]!, this.#server(args[1]!), ...args.slice(2)] };
    }
    const sub = args[1]?.toLowerCase();
    if (name === 'script' && sub === 'exists') {
      return { args: [...args.slice(0, 2), ...args.slice(2).map((s) => this.#server(s))] };
    }
    if (name === 'script' && sub === 'load' && args.length === 3) {
      const script = this.#load(args[2]!);
      if (script === undefined) return { args };
      const clientSha = Buffer.from(sha1(args[2]!));
      return {
        args: [args[0]!, args[1]!, script],
        reply: (r) => (Buffer.isBuffer(r) ? clientSha : r),
      };
    }
    return { args };
  }

  /** The SHA1 redis-server caches a script under, for the one the client sent. */
  #server(sha: string): string {
    return this.#toServer.get(sha.toLowerCase()) ?? sha;
  }

  /** The script to send, when it had Upstash-only flags (and the SHA1 mapping remembered). */
  #load(script: string): string | undefined {
    const rewritten = withoutUpstashFlags(script);
    if (rewritten !== undefined) this.#toServer.set(sha1(script), sha1(rewritten));
    return rewritten;
  }
}
