import { createRequire } from 'node:module';
import type { DataConverter, PayloadCodec } from '@temporalio/common';

/** The failure converter's file (./failure-converter.ts), for the SDK's `failureConverterPath`. */
export const failureConverterPath = createRequire(import.meta.url).resolve('@fleet/temporal/failure-converter');

/** What every Fleet worker and client passes as `dataConverter`: failures as payloads, and the codec when given. */
export function fleetDataConverter(codec?: PayloadCodec): DataConverter {
  return { failureConverterPath, ...(codec ? { payloadCodecs: [codec] } : {}) };
}
