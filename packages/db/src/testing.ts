import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrateDatabase } from './migrate.js';

/**
 * Test databases: migrate once into a template per test run, then hand each test
 * file a fast `CREATE DATABASE ... TEMPLATE` clone that it drops afterwards.
 */
export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

const adminUrl = (base: string) => {
  const u = new URL(base);
  u.pathname = '/postgres';
  return u.toString();
};

async function withAdmin<T>(baseUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl(baseUrl) });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function dbUrl(baseUrl: string, name: string): string {
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Creates (or recreates) the migrated template database. */
export async function prepareTemplate(baseUrl: string, template: string): Promise<void> {
  await withAdmin(baseUrl, async (c) => {
    await c.query(`drop database if exists "${template}" with (force)`);
    await c.query(`create database "${template}"`);
  });
  await migrateDatabase(dbUrl(baseUrl, template));
}

export async function cloneTestDatabase(baseUrl: string, template: string): Promise<TestDatabase> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await withAdmin(baseUrl, (c) => c.query(`create database "${name}" template "${template}"`));
  return {
    name,
    url: dbUrl(baseUrl, name),
    drop: () =>
      withAdmin(baseUrl, (c) => c.query(`drop database if exists "${name}" with (force)`)).then(() => undefined),
  };
}
