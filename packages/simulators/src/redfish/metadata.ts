import type { SimulatedBmc } from './bmc.js';

/**
 * The OData $metadata document (DSP0266 §8.4): references to the DMTF schemas of every resource
 * type the profile serves, and the entity container clients resolve the service root from.
 * Built once per profile from the types its resources actually carry.
 */
const cache = new Map<string, string>();

export function metadataDocument(bmc: SimulatedBmc): string {
  const hit = cache.get(bmc.profile.id);
  if (hit) return hit;
  const namespaces = new Map<string, Set<string>>();
  const add = (odataType: unknown) => {
    const m = typeof odataType === 'string' ? /^#(\w+)\.(?:(v\d+_\d+_\d+)\.)?\w+$/.exec(odataType) : null;
    if (!m) return;
    const set = namespaces.get(m[1]!) ?? new Set([m[1]!]);
    if (m[2]) set.add(`${m[1]}.${m[2]}`);
    namespaces.set(m[1]!, set);
  };
  for (const build of bmc.profile.resources.values()) add(build(bmc)['@odata.type']);
  for (const t of [
    '#Task.v1_7_4.Task',
    '#TaskCollection.TaskCollection',
    '#Session.v1_3_0.Session',
    '#Message.v1_1_1.Message',
    '#LogEntry.v1_13_0.LogEntry',
    '#EventDestination.v1_8_0.EventDestination',
  ])
    add(t);
  const refs = [...namespaces.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([schema, ns]) => {
      const uri = `http://redfish.dmtf.org/schemas/v1/${schema}_v1.xml`;
      const includes = [...ns].map((n) => `    <edmx:Include Namespace="${n}"/>`).join('\n');
      return `  <edmx:Reference Uri="${uri}">\n${includes}\n  </edmx:Reference>`;
    })
    .join('\n');
  const root = (bmc.profile.resources.get('/redfish/v1')!(bmc)['@odata.type'] as string)
    .slice(1)
    .replace(/\.ServiceRoot$/, '');
  const doc = `<?xml version="1.0" encoding="UTF-8"?>
<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">
${refs}
  <edmx:DataServices>
    <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="Service">
      <EntityContainer Name="Service" Extends="${root}.ServiceContainer"/>
    </Schema>
  </edmx:DataServices>
</edmx:Edmx>
`;
  cache.set(bmc.profile.id, doc);
  return doc;
}
