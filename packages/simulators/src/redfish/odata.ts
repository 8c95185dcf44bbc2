import type { SimulatedBmc } from './bmc.js';

/** The OData service document (DSP0266 §8.3): the service root's top-level collections and services. */
export function odataServiceDocument(bmc: SimulatedBmc): Record<string, unknown> {
  const root = bmc.profile.resources.get('/redfish/v1')!(bmc);
  const value = [{ name: 'Service', kind: 'Singleton', url: '/redfish/v1/' }];
  for (const [name, v] of Object.entries(root)) {
    if (typeof v === 'object' && v !== null && '@odata.id' in v && name !== 'Links') {
      value.push({ name, kind: 'Singleton', url: (v as { '@odata.id': string })['@odata.id'] });
    }
  }
  return { '@odata.context': '/redfish/v1/$metadata', value };
}
