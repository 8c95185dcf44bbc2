import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorText } from '../src/index.js';

/** drizzle-orm's DrizzleQueryError, as it shapes itself: the SQL and every parameter in its message. */
class DrizzleQueryError extends Error {
  constructor(
    readonly query: string,
    readonly params: unknown[],
    cause: unknown,
  ) {
    super(`Failed query: ${query}\nparams: ${params.join(',')}`, { cause });
  }
}

const pgError = (message: string, fields: Record<string, string>) => Object.assign(new Error(message), fields);

describe('errorText', () => {
  it('names the statement and what Postgres names, never a parameter, a failing row or a refused value', () => {
    const notNull = pgError('null value in column "name" of relation "racks" violates not-null constraint', {
      code: '23502',
      detail: 'Failing row contains (11, r-huge, vault/secret-path).',
      where: 'SQL function "f" statement 1',
      table: 'racks',
      column: 'name',
    });
    const text = errorText(
      new Error('dispatch failed', {
        cause: new DrizzleQueryError(
          'insert into racks\n  (site_id, name) values ($1, $2)',
          ['lab', 'vault/secret-path'],
          notNull,
        ),
      }),
    );
    assert.equal(
      text,
      'dispatch failed: failed query: insert into racks (site_id, name) values ($1, $2): null value in ' +
        'column "name" of relation "racks" violates not-null constraint; SQLSTATE 23502; table racks; column ' +
        'name',
    );
  });

  it('drops the value a data exception quotes', () => {
    const uuid = pgError('invalid input syntax for type uuid: "pkg-VALUE-0451"', { code: '22P02' });
    const nul = pgError('invalid byte sequence for encoding "UTF8": 0x00', { code: '22021' });
    assert.equal(errorText(uuid), 'invalid input syntax for type uuid; SQLSTATE 22P02');
    assert.equal(errorText(nul), 'invalid byte sequence for encoding "UTF8"; SQLSTATE 22021');
    assert.equal(
      errorText(new Error('workflow "x": not found')),
      'workflow "x": not found',
      'only Postgres data exceptions lose their tail',
    );
  });
});
