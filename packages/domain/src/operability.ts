/**
 * What an inventory record lacks before Fleet can operate the device, in words an
 * operator can act on; empty when it is operable. Both the hub (to refuse a request)
 * and the workflow agent (before starting work) ask this.
 */
export function missingForOperation(device: {
  nodeType: string | null;
  bmcUrl: string | null;
  credentialRef: string | null;
}): string[] {
  return [
    ...(device.nodeType ? [] : ['node type']),
    ...(device.bmcUrl ? [] : ['BMC address']),
    ...(device.credentialRef ? [] : ['credential reference']),
  ];
}
