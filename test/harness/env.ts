/**
 * What the test runner (tools/run-tests.ts) prepared for this run: the Postgres
 * server, the migrated template database and the prebuilt workflow bundle.
 */
export function testEnv(): { databaseUrl: string; templateDb: string; workflowBundle: string | undefined } {
  return {
    databaseUrl: process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    templateDb: process.env['FLEET_TEST_TEMPLATE_DB'] ?? 'fleet_template',
    workflowBundle: process.env['FLEET_TEST_WORKFLOW_BUNDLE'],
  };
}
