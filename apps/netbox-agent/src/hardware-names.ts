import {
  familyTable,
  isNodeType,
  kindTable,
  nodeTypeFor,
  vendorTable,
  type FamilySpec,
  type KindSpec,
  type NodeKind,
  type NodeType,
  type ProductFamily,
  type RackType,
  type Vendor,
} from '@fleet/domain';

/**
 * How NetBox names hardware, read through the hardware table's NetBox names: slugs and models are compared as
 * lower-case words, so 'GB200 NVL72 Compute Tray', 'gb200-nvl72' and 'GB200_NVL72' all name the gb200 family.
 */
const framedWords = (text: string) =>
  `-${text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .join('-')}-`;

/** The one key whose names appear in the text; null when none or several do: we never guess. */
function onlyMatch<K extends string>(text: string, table: Record<K, readonly string[]>): K | null {
  const words = framedWords(text);
  const found = (Object.keys(table) as K[]).filter((key) => table[key].some((n) => words.includes(`-${n}-`)));
  return found.length === 1 ? found[0]! : null;
}

function namesBy<K extends string, S>(table: Record<K, S>, names: (spec: S) => readonly string[]) {
  const out = {} as Record<K, readonly string[]>;
  for (const key of Object.keys(table) as K[]) out[key] = names(table[key]);
  return out;
}

const familyNames = namesBy<ProductFamily, FamilySpec>(familyTable, (f) => f.netboxNames);
const kindWords = namesBy<NodeKind, KindSpec>(kindTable, (k) => k.netboxRoleWords);

export function familyFromNames(text: string): ProductFamily | null {
  return onlyMatch(text, familyNames);
}

export function rackTypeFromNames(text: string | null | undefined): RackType | null {
  const family = familyFromNames(text ?? '');
  return family ? familyTable[family].rackType : null;
}

/** The kind a NetBox device role slug names (compute-tray, nvlink-switch-tray, power-shelf, ...). */
export function kindFromRoleSlug(slug: string | null | undefined): NodeKind | null {
  return slug ? onlyMatch(slug, kindWords) : null;
}

/** Fleet's vendor for a NetBox manufacturer slug; other manufacturers are kept as NetBox names them. */
export function vendorFromManufacturer(slug: string): Vendor | string {
  const vendor = (Object.keys(vendorTable) as Vendor[]).find((v) =>
    (vendorTable[v].netboxSlugs as readonly string[]).includes(slug),
  );
  return vendor ?? slug;
}

export interface NetboxHardwareNames {
  deviceTypeSlug: string | null;
  model: string | null;
  roleSlug: string | null;
  vendor: string | null;
}

/**
 * A device's node type: its device type's slug when that names one (compute-gb200-nvidia), which like RMS's NodeType
 * enum overrides the descriptor; else the descriptor read from role, manufacturer and the family in the model or slug.
 */
export function nodeTypeFromNetbox(n: NetboxHardwareNames): NodeType | null {
  const bySlug = n.deviceTypeSlug?.replace(/-/g, '_');
  if (bySlug && isNodeType(bySlug)) return bySlug;
  const role = kindFromRoleSlug(n.roleSlug);
  const productFamily = familyFromNames(`${n.model ?? ''} ${n.deviceTypeSlug ?? ''}`);
  return role && n.vendor && productFamily ? nodeTypeFor({ role, vendor: n.vendor, productFamily }) : null;
}
