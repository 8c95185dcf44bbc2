import type { Link, RedfishClient, ServiceRoot } from './client.js';
import { serviceRootUri } from './client.js';
import { RedfishError } from './errors.js';

interface CollectionPage {
  Members?: Link[];
  'Members@odata.count'?: number;
  'Members@odata.nextLink'?: string;
}

export interface CollectionMembers {
  /** Member URIs in BMC order, each once. */
  members: string[];
  /** Inconsistencies in what the BMC listed (duplicates, a count that does not match). */
  warnings: string[];
}

/**
 * The members of a collection, following nextLink pages. BMCs do list members twice
 * (GH200 FirmwareInventory lists HGX_FW_FPGA_0 twice; the DMTF power shelf lists Bay3
 * twice and omits Bay2): duplicates are dropped and reported, never fatal.
 */
export async function readCollection(client: RedfishClient, uri: string): Promise<CollectionMembers> {
  const { members, warnings } = await readPages(client, uri, uri);
  return { members, warnings };
}

export interface CollectionWithBodies extends CollectionMembers {
  /** A member's body: the one the BMC sent with the listing, else read now. */
  read<T>(member: string): Promise<T>;
}

/**
 * A collection whose members' bodies are all wanted. Where the service root advertises `$expand=.`
 * (ProtocolFeaturesSupported.ExpandQuery.NoLinks), one request brings them all, instead of one request per member
 * (27 on a GB200 tray's firmware inventory); a BMC that then refuses the parameter, or ignores it, has its members
 * read one by one, as one that does not advertise it.
 */
export async function readCollectionWithBodies(client: RedfishClient, uri: string): Promise<CollectionWithBodies> {
  const pages = await expandedPages(client, uri);
  const { inline, ...listed } = pages ?? (await readPages(client, uri, uri));
  return {
    ...listed,
    read: async <T>(member: string) => (inline.get(member) as T | undefined) ?? client.get<T>(member),
  };
}

async function expandedPages(client: RedfishClient, uri: string): Promise<Pages | undefined> {
  const root = await client.root();
  if (root.ProtocolFeaturesSupported?.ExpandQuery?.NoLinks !== true) return undefined;
  try {
    return await readPages(client, uri, `${uri}?$expand=.`);
  } catch (err) {
    if (!(err instanceof RedfishError) || !refusedQuery.has(err.status ?? 0)) throw err;
    const pages = await readPages(client, uri, uri);
    pages.warnings.push(`${uri}: $expand advertised but refused (HTTP ${err.status}); members read one by one`);
    return pages;
  }
}

/** Statuses a BMC answers a query parameter it does not take with (DSP0266: 400 or 501). */
const refusedQuery = new Set([400, 405, 414, 501]);

interface Pages extends CollectionMembers {
  /** Member bodies sent inline (an honoured $expand), by member URI. */
  inline: Map<string, unknown>;
}

async function readPages(client: RedfishClient, uri: string, firstPage: string): Promise<Pages> {
  const seen = new Set<string>();
  const inline = new Map<string, unknown>();
  const warnings: string[] = [];
  let listed = 0;
  let declared: number | undefined;
  const visited = new Set<string>();
  for (let page: string | undefined = firstPage; page && !visited.has(page);) {
    visited.add(page);
    const body: CollectionPage = await client.get<CollectionPage>(page);
    const count = body['Members@odata.count'];
    declared ??= typeof count === 'number' ? count : undefined;
    const listedHere: unknown = body.Members ?? [];
    if (!Array.isArray(listedHere))
      throw new RedfishError('Protocol', client.bmc, page, `Members is ${typeof listedHere}, not a list`);
    for (const m of listedHere as (Link | null | undefined)[]) {
      const id = m?.['@odata.id'];
      if (typeof id !== 'string') continue;
      listed++;
      const key = trimSlash(id);
      if (seen.has(key)) warnings.push(`${uri}: member ${key} listed more than once`);
      seen.add(key);
      if (Object.keys(m!).length > 1) inline.set(key, m);
    }
    const next: unknown = body['Members@odata.nextLink'];
    page = typeof next === 'string' ? next : undefined;
  }
  if (declared !== undefined && declared !== seen.size) {
    warnings.push(
      `${uri}: Members@odata.count is ${declared} but ${seen.size} distinct members are listed (${listed} entries)`,
    );
  }
  return { members: [...seen], warnings, inline };
}

/** A link named in the service root, or FailedPrecondition if this BMC does not offer it. */
export async function rootLink(client: RedfishClient, name: keyof ServiceRoot & string): Promise<string> {
  const uri = linkOf(await client.root(), name);
  if (!uri)
    throw new RedfishError('FailedPrecondition', client.bmc, serviceRootUri, `service root has no ${name} link`);
  return uri;
}

/** The @odata.id of a navigation property, if present. */
export function linkOf(resource: unknown, name: string): string | undefined {
  const v = (resource as Record<string, Link | undefined> | undefined)?.[name]?.['@odata.id'];
  return typeof v === 'string' ? trimSlash(v) : undefined;
}

/**
 * The member of a collection whose Id is `id`. Member URIs usually end in the Id, which
 * saves reading every member; otherwise each member is read and its Id compared.
 */
export async function findMember(
  client: RedfishClient,
  collectionUri: string,
  id: string,
): Promise<string | undefined> {
  return memberWithId(client, (await readCollection(client, collectionUri)).members, id);
}

/** The one of `members` whose Id is `id`: by path first, else by reading each member. */
export async function memberWithId(
  client: RedfishClient,
  members: readonly string[],
  id: string,
): Promise<string | undefined> {
  const byPath = members.find((m) => m.endsWith(`/${id}`));
  if (byPath) return byPath;
  for (const m of members) {
    if ((await client.get<{ Id?: string }>(m)).Id === id) return m;
  }
  return undefined;
}

/**
 * URI of member `id` of a collection named in the service root (Chassis, Managers), found by
 * discovery and cached until the client is invalidated; NotFound when the BMC lists no such member.
 */
export function memberUri(
  client: RedfishClient,
  collection: 'Chassis' | 'Managers' | 'Systems',
  id: string,
): Promise<string> {
  return client.link(`${collection}:${id}`, async () => {
    const collectionUri = await rootLink(client, collection);
    const found = await findMember(client, collectionUri, id);
    if (!found) throw new RedfishError('NotFound', client.bmc, collectionUri, `no ${collection} member ${id}`);
    return found;
  });
}

/** Some services write links with a trailing slash (`/redfish/v1/`); compare and cache without it. */
export function trimSlash(uri: string): string {
  return uri.length > 1 && uri.endsWith('/') ? uri.slice(0, -1) : uri;
}
