import pg from 'pg';
import { prepareTemplate } from '@fleet/db/testing';
import { buildWorkflowBundle } from '@fleet/satellite';
import { repoRoot } from '../../tools/lib/processes.js';

/**
 * What a stack benchmark needs before it starts the stack: a migrated template
 * database and a prebuilt workflow bundle (the harness reads both from the env).
 * Returns the cleanup.
 */
export async function prepareStackBench(name: string): Promise<() => Promise<void>> {
  const databaseUrl = process.env['FLEET_TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const template = `fleet_bench_${name}_${process.pid}`;
  process.env['FLEET_TEST_TEMPLATE_DB'] = template;
  process.env['FLEET_TEST_WORKFLOW_BUNDLE'] = `${repoRoot}/.run/bench-${name}-bundle.js`;
  await prepareTemplate(databaseUrl, template);
  await buildWorkflowBundle(process.env['FLEET_TEST_WORKFLOW_BUNDLE']);
  return async () => {
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`drop database if exists "${template}" with (force)`);
    await admin.end();
  };
}

/** Workflow-agent firmware timings (seconds, before the time scale) for the benches that flash simulated trays. */
export const benchFirmwareTimings = {
  taskPollS: 1,
  pushDelayS: 1,
  acStabilizeS: 1,
  powerStateTimeoutS: 120,
  bmcRecoveryS: 300,
  taskTimeoutS: 600,
};
