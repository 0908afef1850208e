import { FloodgateError } from '@floodgate/core';

/**
 * The Fastify hooks the plugin can run in.
 * @example
 * ```ts
 * import type { FastifyHook } from '@floodgate/http/fastify';
 *
 * const hook: FastifyHook = 'preHandler';
 * ```
 * @public
 */
export type FastifyHook = 'onRequest' | 'preHandler';

/** The hook named by a plugin or route option; throws `FloodgateError('INVALID_OPTION')`. */
export function checkHook(value: unknown, where: string): FastifyHook {
  if (value === undefined) return 'onRequest';
  if (value !== 'onRequest' && value !== 'preHandler') {
    throw new FloodgateError(
      'INVALID_OPTION',
      `${where}hook must be 'onRequest' or 'preHandler', got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
