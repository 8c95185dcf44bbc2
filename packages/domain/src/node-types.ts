import { z } from 'zod';

/** Node types as in the RMS hardware compatibility list (rms.md §3.2). */
export const nodeTypes = [
  'compute_gb200_nvidia',
  'compute_gb300_nvidia',
  'switch_gb200_nvidia',
  'switch_gb300_nvidia',
  'powershelf_gb200_liteon',
  'powershelf_gb200_delta',
] as const;
export const NodeType = z.enum(nodeTypes);
export type NodeType = z.infer<typeof NodeType>;
