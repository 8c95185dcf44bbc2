import { z } from 'zod';
import {
  familyTable,
  hardwareOf,
  jobKinds,
  jobKindTable,
  JobKind,
  kindTable,
  NodeType,
  nodeTypes,
  Role,
  vendorTable,
  type JobKindSpec,
} from '@fleet/domain';

// The hardware table and the job-kind registry as the API shows them, so UIs and scripts read them instead of
// repeating them. Every value comes from packages/domain; the enums below that the domain holds only as types are
// checked against them by the views' return types (a new profile or scope fails the typecheck here).

const keysOf = <T extends object>(table: T) => Object.keys(table) as [keyof T & string, ...(keyof T & string)[]];

export const HardwareView = z
  .object({
    node_type: NodeType,
    kind: z.enum(keysOf(kindTable)),
    kind_label: z.string(),
    vendor: z.enum(keysOf(vendorTable)),
    vendor_name: z.string(),
    family: z.enum(keysOf(familyTable)),
    generation: z.string(),
    rack_type: z.string(),
    /** The controllers a reset can target (a compute tray's HGX HMC besides its BMC). */
    managers: z.array(z.enum(['bmc', 'hmc'])),
    management_profile: z.enum(['redfish', 'redfish+nvue']),
    firmware_profile: z.enum(['redfish-update', 'redfish-nvfwupd', 'nvos-platform']),
    /** What "off" means: system (graceful ComputerSystem.Reset) or shelf-output (the shelf's DC output). */
    reset: z.enum(['system', 'shelf-output']),
    /** development: mapped and operable but not yet qualified. */
    status: z.enum(['supported', 'development']),
    rms_enum: z.number().int().nullable(),
  })
  .meta({ id: 'Hardware' });
export const HardwareList = z
  .object({ items: z.array(HardwareView), next_cursor: z.null() })
  .meta({ id: 'HardwareList' });

export const JobKindView = z
  .object({
    kind: JobKind,
    /** The Temporal workflow type; null when the children do the work (a batch). */
    workflow_type: z.string().nullable(),
    /** The least role that may request it. */
    role: Role,
    scope: z.enum(['device', 'rack', 'selection', 'campaign']),
    guard: z.enum(['device', 'rack', 'none']),
    /** Destroys state on the device: UIs ask for a typed confirmation. */
    destructive: z.boolean(),
    summary: z.string(),
  })
  .meta({ id: 'JobKindInfo' });
export const JobKindList = z.object({ items: z.array(JobKindView), next_cursor: z.null() }).meta({ id: 'JobKindList' });

export function hardwareView(nodeType: NodeType): z.infer<typeof HardwareView> {
  const h = hardwareOf(nodeType)!;
  return {
    node_type: h.nodeType,
    kind: h.kind,
    kind_label: kindTable[h.kind].label,
    vendor: h.vendor,
    vendor_name: vendorTable[h.vendor].name,
    family: h.family,
    generation: h.generation,
    rack_type: h.rackType,
    managers: [...h.managers],
    management_profile: h.managementProfile,
    firmware_profile: h.firmwareProfile,
    reset: h.reset,
    status: h.status,
    rms_enum: h.rmsEnum,
  };
}

export function jobKindView(kind: JobKind): z.infer<typeof JobKindView> {
  const spec: JobKindSpec = jobKindTable[kind];
  return {
    kind,
    workflow_type: spec.workflowType,
    role: spec.role,
    scope: spec.scope,
    guard: spec.guard,
    destructive: spec.destructive,
    summary: spec.summary,
  };
}

export const hardwareList = () => ({ items: nodeTypes.map(hardwareView), next_cursor: null });
export const jobKindList = () => ({ items: jobKinds.map(jobKindView), next_cursor: null });
