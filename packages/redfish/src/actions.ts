import type { RedfishClient } from './client.js';
import { RedfishError } from './errors.js';

/**
 * An action as a resource advertises it under `Actions`: its target, and its allowed values inline or in an ActionInfo.
 */
export interface RedfishAction {
  target?: string;
  '@Redfish.ActionInfo'?: string;
  [annotation: `${string}@Redfish.AllowableValues`]: string[] | undefined;
}

interface ActionInfo {
  Parameters?: { Name?: string; AllowableValues?: string[] }[];
}

/**
 * The values `parameter` of `action` accepts: the inline `<parameter>@Redfish.AllowableValues`,
 * else the `AllowableValues` of its `@Redfish.ActionInfo` resource (NVIDIA BMCs list Chassis,
 * System and Manager reset types only there), else undefined when the service does not say.
 * An ActionInfo is read once per client, until invalidate().
 */
export async function allowableValues(
  client: RedfishClient,
  action: RedfishAction,
  parameter: string,
): Promise<string[] | undefined> {
  const inline: unknown = action[`${parameter}@Redfish.AllowableValues`];
  if (Array.isArray(inline)) return inline.filter((v): v is string => typeof v === 'string');
  const infoUri: unknown = action['@Redfish.ActionInfo'];
  if (typeof infoUri !== 'string' || !infoUri) return undefined;
  const info = await client.cached(`actioninfo:${infoUri}`, () => client.get<ActionInfo>(infoUri));
  const parameters: unknown = info.Parameters;
  const values: unknown = (Array.isArray(parameters) ? (parameters as ActionInfo['Parameters'])! : []).find(
    (p) => p?.Name === parameter,
  )?.AllowableValues;
  if (values === undefined || values === null) return undefined;
  // A list the client cannot read must not pass as "anything goes": the reset is refused, naming the ActionInfo.
  if (!Array.isArray(values))
    throw new RedfishError('Protocol', client.bmc, infoUri, `AllowableValues of ${parameter} is not a list`);
  return values.filter((v): v is string => typeof v === 'string');
}

/** A reset the resource does not allow: refused before anything is posted. */
export class ResetTypeNotAllowedError extends RedfishError {
  constructor(
    bmc: string,
    uri: string,
    readonly device: string | undefined,
    readonly resetType: string,
    readonly allowed: readonly string[],
  ) {
    super(
      'InvalidArgument',
      bmc,
      uri,
      `${device ? `device ${device}: ` : ''}ResetType ${resetType} not allowed (allowed: ` +
        `${allowed.join(', ') || 'none'})`,
    );
    this.name = 'ResetTypeNotAllowedError';
  }
}

/**
 * POSTs `actionName` (e.g. `#Chassis.Reset`) of `resource` with `ResetType`, to the target the
 * resource advertises, after checking the type against what the action or its ActionInfo allows.
 */
export async function postReset(
  client: RedfishClient,
  resource: { '@odata.id'?: string; Actions?: Record<string, unknown> },
  resourceUri: string,
  actionName: `#${string}.Reset`,
  resetType: string,
): Promise<void> {
  const actions: unknown = resource.Actions;
  const action = (
    actions && typeof actions === 'object' ? (actions as Record<string, unknown>)[actionName] : undefined
  ) as RedfishAction | null | undefined;
  if (typeof action?.target !== 'string' || !action.target)
    throw new RedfishError(
      'FailedPrecondition',
      client.bmc,
      resourceUri,
      `advertises no ${actionName.slice(1)} action`,
    );
  const allowed = await allowableValues(client, action, 'ResetType');
  if (allowed && !allowed.includes(resetType))
    throw new ResetTypeNotAllowedError(client.bmc, action.target, client.device, resetType, allowed);
  await client.post(action.target, { ResetType: resetType });
}
