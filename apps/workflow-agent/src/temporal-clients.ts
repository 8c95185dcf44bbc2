import { Client, type Connection } from '@temporalio/client';
import { fleetDataConverter } from '@fleet/temporal';
import { EncryptionCodec, type PayloadKeys } from '@fleet/temporal/codec';

/**
 * The agent's Temporal clients over one connection: a site's workflows are started and signalled through a client
 * whose codec encrypts with that site's keys (docs/security.md, "Keys per site"); `any` lists and reads workflows of
 * every site. Without payload encryption they are all one client.
 */
export interface TemporalClients {
  forSite(siteId: string): Client;
  any: Client;
}

export function temporalClients(
  connection: Connection,
  namespace: string,
  keys: PayloadKeys | undefined,
): TemporalClients {
  const make = (codec?: EncryptionCodec) =>
    new Client({ connection, namespace, dataConverter: fleetDataConverter(codec) });
  if (!keys) {
    const one = make();
    return { forSite: () => one, any: one };
  }
  const bySite = new Map<string, Client>();
  return {
    forSite: (siteId) => {
      let client = bySite.get(siteId);
      if (!client) bySite.set(siteId, (client = make(new EncryptionCodec(keys.forSite(siteId)))));
      return client;
    },
    any: make(new EncryptionCodec(keys.anySite())),
  };
}
