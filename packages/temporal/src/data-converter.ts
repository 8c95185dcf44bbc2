import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { DataConverter, PayloadCodec } from '@temporalio/common';

/** Set by `pnpm build` (tools/build.ts): the CommonJS failure converter it writes beside the bundle. */
declare const FLEET_FAILURE_CONVERTER_FILE: string | undefined;

/**
 * The failure converter's file, for the SDK's `failureConverterPath`, which it require()s: ./failure-converter.ts from
 * the sources (tsx compiles it), the build's CommonJS copy from a bundle (plain node loads no TypeScript).
 */
export const failureConverterPath =
  typeof FLEET_FAILURE_CONVERTER_FILE === 'string'
    ? fileURLToPath(new URL(FLEET_FAILURE_CONVERTER_FILE, import.meta.url))
    : createRequire(import.meta.url).resolve('@fleet/temporal/failure-converter');

/** What every Fleet worker and client passes as `dataConverter`: failures as payloads, and the codec when given. */
export function fleetDataConverter(codec?: PayloadCodec): DataConverter {
  return { failureConverterPath, ...(codec ? { payloadCodecs: [codec] } : {}) };
}
