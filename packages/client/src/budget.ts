import { invalidOption } from './errors.js';
import { checkNames } from './option-names.js';

/**
 * The size of a {@link RetryBudget} and how fast successes refill it.
 * @example
 * Five retries from full, then one for every twenty successes.
 * ```ts
 * import { createRetryBudget, type RetryBudgetOptions } from '@floodgate/client';
 *
 * const options: RetryBudgetOptions = { maxTokens: 10, tokenRatio: 0.05 };
 * const budget = createRetryBudget(options);
 * ```
 * @public
 */
export interface RetryBudgetOptions {
  /**
   * Tokens the budget holds when full. Retries stop while half or less are left.
   * @default 10
   */
  readonly maxTokens?: number;
  /**
   * What each success earns back, in tokens. At 0.1, ten successes pay for one retry.
   * @default 0.1
   */
  readonly tokenRatio?: number;
}

/**
 * A retry budget in the manner of gRPC's retry throttling: every retry spends a token, every
 * success earns back a fraction of one, and while the budget is at or below half, nothing is
 * retried. During an outage each client then adds a bounded share of retries instead of
 * multiplying its load by the number of attempts.
 * @example
 * ```ts
 * import { RetryBudget, withRetry } from '@floodgate/client';
 *
 * const budget = new RetryBudget({ maxTokens: 20 });
 * const api = withRetry(fetch, { budget });
 * // Worth a gauge: at half of maxTokens or below, nothing is retried.
 * console.log(`retry budget: ${budget.tokens}/${budget.maxTokens}`);
 * ```
 * @public
 */
export class RetryBudget {
  readonly maxTokens: number;
  readonly tokenRatio: number;
  #tokens: number;

  constructor(options: RetryBudgetOptions = {}) {
    checkNames('RetryBudget', options, ['maxTokens', 'tokenRatio']);
    const maxTokens = options.maxTokens ?? 10;
    const tokenRatio = options.tokenRatio ?? 0.1;
    if (!(Number.isFinite(maxTokens) && maxTokens > 0)) {
      throw invalidOption(`budget maxTokens must be > 0, got ${maxTokens}`);
    }
    if (!(Number.isFinite(tokenRatio) && tokenRatio > 0)) {
      throw invalidOption(`budget tokenRatio must be > 0, got ${tokenRatio}`);
    }
    this.maxTokens = maxTokens;
    this.tokenRatio = tokenRatio;
    this.#tokens = maxTokens;
  }

  /** Tokens left. */
  get tokens(): number {
    return this.#tokens;
  }

  /** Spends a token and answers true if a retry may be made now. */
  tryRetry(): boolean {
    if (this.#tokens <= this.maxTokens / 2) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Records a success. */
  succeed(): void {
    this.#tokens = Math.min(this.maxTokens, this.#tokens + this.tokenRatio);
  }
}

/**
 * A budget shared by every call that passes it.
 * @example
 * ```ts
 * import { createRetryBudget, withRetry } from '@floodgate/client';
 *
 * const budget = createRetryBudget({ maxTokens: 20, tokenRatio: 0.1 });
 * const api = withRetry(fetch, { budget });
 * const search = withRetry(fetch, { budget }); // same budget: one outage, one allowance
 * ```
 * @public
 */
export function createRetryBudget(options?: RetryBudgetOptions): RetryBudget {
  return new RetryBudget(options);
}
