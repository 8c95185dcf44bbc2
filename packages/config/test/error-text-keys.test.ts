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

describe('errorText with keys (inventory issues)', () => {
  it('keeps every line and what Postgres says about the refused row, never the statement parameters', () => {
    const pgError = Object.assign(
      new Error('duplicate key value violates unique constraint "racks_site_id_name_unique"'),
      {
        code: '23505',
        detail: 'Key (site_id, name)=(ams1, r001) already exists.',
        table: 'racks',
        constraint: 'racks_site_id_name_unique',
      },
    );
    const err = new DrizzleQueryError(
      '\n    insert into racks (site_id, name)\n    select r."siteSlug" from jsonb_to_recordset($1::jsonb)',
      ['[{"name":"r001","credentialRef":"vault/secret-path"}]'],
      pgError,
    );
    const text = errorText(new Error('sync failed\nsecond line', { cause: err }), { keys: true });
    assert.match(text, /^sync failed\nsecond line: failed query: insert into racks \(site_id, name\) select/);
    assert.match(
      text,
      new RegExp(
        /SQLSTATE 23505; Key \(site_id, name\)=\(ams1, r001\) already exists\.; /.source +
          /table racks; constraint racks_site_id_name_unique$/.source,
      ),
    );
    assert.doesNotMatch(text, /vault|params/);
  });

  it(`names the column and constraint of a NOT NULL or CHECK violation, never the failing row pg lists in \
detail`, () => {
    const row = 'Failing row contains (11, 1, r-huge, null, 2147483647, vault/secret-path).';
    const notNull = Object.assign(
      new Error('null value in column "name" of relation "racks" violates not-null constraint'),
      {
        code: '23502',
        detail: row,
        table: 'racks',
        column: 'name',
      },
    );
    const check = Object.assign(
      new Error('new row for relation "racks" violates check constraint "racks_u_height_check"'),
      {
        code: '23514',
        detail: row,
        table: 'racks',
        constraint: 'racks_u_height_check',
      },
    );
    const notNullText = errorText(notNull, { keys: true });
    const checkText = errorText(new DrizzleQueryError('update racks set u_height = $1', [2147483647], check), {
      keys: true,
    });
    assert.equal(
      notNullText,
      'null value in column "name" of relation "racks" violates not-null constraint; SQLSTATE 23502; table ' +
        'racks; column name',
    );
    assert.match(
      checkText,
      /check constraint "racks_u_height_check"; SQLSTATE 23514; table racks; constraint racks_u_height_check$/,
    );
    for (const text of [notNullText, checkText]) assert.doesNotMatch(text, /Failing row|r-huge|vault|2147483647/);
  });
});
