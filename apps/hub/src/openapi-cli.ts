import { exitOnHelp } from '@fleet/config';
import { openapiDocument } from './openapi.js';

exitOnHelp(
  'Usage: node --import tsx apps/hub/src/openapi-cli.ts > openapi.json\n\n' +
    "Prints the hub's OpenAPI document as JSON; needs no database, network or config.",
);
process.stdout.write(`${JSON.stringify(await openapiDocument(), null, 2)}\n`);
