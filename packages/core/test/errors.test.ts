import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { FloodgateError, isFloodgateError } from '../src/errors.js';

type ErrorsModule = typeof import('../src/errors.js');

/** A second, independent copy of src/errors.ts, evaluated in `context` (another realm) or here. */
function loadCopy(context?: vm.Context): ErrorsModule {
  const source = readFileSync(new URL('../src/errors.ts', import.meta.url), 'utf8');
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const wrapper = `(function (exports) { ${js}\n return exports; })`;
  const fn =
    context === undefined ? vm.runInThisContext(wrapper) : vm.runInContext(wrapper, context);
  return fn(context === undefined ? {} : vm.runInContext('({})', context)) as ErrorsModule;
}

describe('FloodgateError', () => {
  it('carries a stable code, a name, a message and a cause', () => {
    const cause = new Error('socket closed');
    const e = new FloodgateError('STORE_UNAVAILABLE', 'the store failed', { cause });
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(FloodgateError);
    expect([e.name, e.code, e.message, e.cause]).toEqual([
      'FloodgateError',
      'STORE_UNAVAILABLE',
      'the store failed',
      cause,
    ]);
    expect(e.stack).toContain('FloodgateError');
    expect(isFloodgateError(e)).toBe(true);
  });

  it('is told apart from look-alikes', () => {
    const lookAlikes: unknown[] = [
      null,
      undefined,
      'FloodgateError',
      42,
      new Error('x'),
      Object.assign(new Error('x'), { name: 'FloodgateError', code: 'INVALID_KEY' }),
      { name: 'FloodgateError', code: 'INVALID_KEY', message: 'x' },
      { [Symbol('floodgate.error')]: true },
      { [Symbol.for('floodgate.error')]: 'yes' },
    ];
    for (const v of lookAlikes) expect(isFloodgateError(v)).toBe(false);
  });

  it('is recognised across realms (node:vm), where instanceof fails', () => {
    const context = vm.createContext({});
    const other = loadCopy(context);
    const foreign = new other.FloodgateError('INVALID_COST', 'from another realm');
    expect(foreign instanceof FloodgateError).toBe(false);
    expect(foreign instanceof Error).toBe(false);
    expect(isFloodgateError(foreign)).toBe(true);
    expect(foreign.code).toBe('INVALID_COST');
    // And the other way round.
    expect(other.isFloodgateError(new FloodgateError('INVALID_KEY', 'from here'))).toBe(true);
    expect(other.isFloodgateError(vm.runInContext('new Error("plain")', context))).toBe(false);
    // An error thrown inside the other realm and caught here.
    const thrown = (() => {
      try {
        vm.runInContext(
          '(fe) => { throw new fe("STORE_TIMEOUT", "late"); }',
          context,
        )(other.FloodgateError);
      } catch (e) {
        return e;
      }
    })();
    expect(isFloodgateError(thrown)).toBe(true);
  });

  it('is recognised from a duplicate copy of the package in the same realm', () => {
    const copy = loadCopy();
    expect(copy.FloodgateError).not.toBe(FloodgateError);
    const e = new copy.FloodgateError('INVALID_POLICY', 'from a duplicate');
    expect(e instanceof FloodgateError).toBe(false);
    expect(isFloodgateError(e)).toBe(true);
    expect(copy.isFloodgateError(new FloodgateError('INVALID_POLICY', 'x'))).toBe(true);
  });
});
