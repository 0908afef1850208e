/**
 * The JSON of a 429's problem details, written straight from the decision: byte for byte
 * `JSON.stringify(tooManyRequestsProblem(decision, retryAfter))`, without building the object
 * and its policy list first (when no `onLimited` needs to see them).
 */
import type { Decision, PolicyDecision } from '@floodgate/core';
import { tooManyRequestsProblem } from './response.js';

/**
 * Whether JSON.stringify escapes anything in `s`: `"`, `\`, control characters, or surrogates
 * (a lone one is written as \uXXXX; a pair is not, but taking the slow path for it is exact).
 */
function needsEscape(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return true;
  }
  return false;
}

/** The JSON text of a string, quotes included. */
function quote(s: string): string {
  return needsEscape(s) ? JSON.stringify(s) : `"${s}"`;
}

/** The JSON text of a number: JSON has no NaN nor Infinity. */
const numberJson = (n: number): string => (Number.isFinite(n) ? String(n) : 'null');

/**
 * `JSON.stringify(name)` as it appears escaped inside the detail string: the quotes become
 * `\"`, and what JSON.stringify escaped is escaped once more.
 */
function nameInDetail(name: string): string {
  if (!needsEscape(name)) return `\\"${name}\\"`;
  return JSON.stringify(JSON.stringify(name)).slice(1, -1);
}

const seconds = (ms: number): number => (ms > 0 ? Math.ceil(ms / 1000) : 0);

function policyJson(p: PolicyDecision): string {
  const reset = p.allowed ? p.resetAfterMs : Math.max(p.resetAfterMs, p.retryAfterMs);
  const window = Number.isFinite(p.windowMs)
    ? `,"windowSeconds":${numberJson(seconds(p.windowMs))}`
    : '';
  return `{"name":${quote(p.name)},"limit":${numberJson(p.limit)},"remaining":${numberJson(p.remaining)},"resetSeconds":${numberJson(seconds(reset))}${window}}`;
}

/** Whether every field the body reads is the type it is declared as (then no JSON quirk applies). */
function typical(decision: Decision, retryAfter: number): boolean {
  if (typeof retryAfter !== 'number' || !Array.isArray(decision.policies)) return false;
  for (const p of decision.policies) {
    if (
      typeof p !== 'object' ||
      p === null ||
      typeof p.name !== 'string' ||
      typeof p.limit !== 'number' ||
      typeof p.remaining !== 'number' ||
      typeof p.resetAfterMs !== 'number' ||
      typeof p.retryAfterMs !== 'number' ||
      typeof p.windowMs !== 'number'
    ) {
      return false;
    }
  }
  return true;
}

/** `JSON.stringify(tooManyRequestsProblem(decision, retryAfter))`, byte for byte. */
export function tooManyRequestsBody(decision: Decision, retryAfter: number): string {
  // Anything else (a name that is not a string, say) is left to JSON.stringify's own rules.
  if (!typical(decision, retryAfter)) {
    return JSON.stringify(tooManyRequestsProblem(decision, retryAfter));
  }
  let violated = '';
  let detailNames = '';
  let policies = '';
  const list = decision.policies;
  for (let i = 0; i < list.length; i++) {
    const p = list[i] as PolicyDecision;
    policies += i === 0 ? policyJson(p) : `,${policyJson(p)}`;
    // A shadowed policy's denial is reported in `policies`, not named as violated.
    if (p.allowed || p.shadow === true) continue;
    if (violated === '') {
      violated = quote(p.name);
      detailNames = nameInDetail(p.name);
    } else {
      violated += `,${quote(p.name)}`;
      detailNames += `, ${nameInDetail(p.name)}`;
    }
  }
  const detail = `Rate limit exceeded${detailNames === '' ? '' : ` for ${detailNames}`}; retry in ${retryAfter} s.`;
  return `{"type":"about:blank","title":"Too Many Requests","status":429,"detail":"${detail}","retryAfter":${numberJson(retryAfter)},"violated":[${violated}],"policies":[${policies}]}`;
}
