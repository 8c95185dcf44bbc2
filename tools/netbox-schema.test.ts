import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { repoRoot } from './lib/processes.js';

const netbox = (file: string) => join(repoRoot, 'tools/netbox', file);
const dump = () => gunzipSync(readFileSync(netbox('schema.sql.gz'))).toString('utf8');

/** The rows a plain pg_dump holds for one table: the lines between its COPY and the closing `\.`. */
function copiedRows(sql: string, table: string): string[] {
  const start = sql.indexOf(`COPY public.${table} (`);
  assert.notEqual(start, -1, `the dump has no COPY for ${table}`);
  const body = sql.slice(sql.indexOf('\n', start) + 1);
  return body.slice(0, body.indexOf('\\.\n')).split('\n').filter(Boolean);
}

describe("tools/netbox/schema.sql.gz (the template's starting point)", () => {
  it('was made for the pinned requirements: otherwise every fresh install migrates for over 10 minutes', () => {
    const requirements = createHash('sha256')
      .update(readFileSync(netbox('requirements.txt')))
      .digest('hex');
    assert.equal(
      readFileSync(netbox('schema.requirements-sha256'), 'utf8').trim(),
      requirements,
      'tools/netbox/requirements.txt changed since the dump was made: run bash tools/netbox/dump-schema.sh',
    );
  });

  it("holds the migrations' ledger and no user, token or session: those are made per machine", () => {
    const sql = dump();
    assert.ok(copiedRows(sql, 'django_migrations').length >= 300, 'the ledger of applied migrations');
    for (const table of ['users_user', 'users_token', 'django_session', 'users_userconfig']) {
      assert.deepEqual(copiedRows(sql, table), [], `${table} is empty in the dump`);
    }
  });
});
