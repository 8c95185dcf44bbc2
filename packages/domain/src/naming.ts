/** Task queue of a site's satellite workers. The only place this name is built. */
export function siteTaskQueue(siteId: string): string {
  return `site-${siteId}`;
}

/** Temporal workflow type per job kind; never rename one (it is stored in histories). */
export const workflowTypeFor = {
  'device.power': 'devicePower',
  'device.bmc_reset': 'deviceBmcReset',
  'device.power_refresh': 'devicePowerRefresh',
  'rack.power': 'rackPower',
  'rack.cold_reboot': 'rackColdReboot',
  'device.firmware_update': 'deviceFirmwareUpdate',
  'device.firmware_refresh': 'deviceFirmwareRefresh',
  'firmware.campaign': 'firmwareCampaign',
  'switch.nvos_install': 'switchNvosInstall',
  'switch.password_rotation': 'switchPasswordRotation',
  'switch.factory_reset': 'switchFactoryReset',
  'switch.firmware_update': 'switchFirmwareUpdate',
  'switch.certificate_install': 'switchCertificateInstall',
} as const;

/** Custom search attributes the project registers on its Temporal namespace. */
export const searchAttributes = {
  jobKind: { name: 'FleetJobKind', type: 'Keyword' },
  siteId: { name: 'FleetSiteId', type: 'Keyword' },
  deviceId: { name: 'FleetDeviceId', type: 'Keyword' },
} as const;

/**
 * A site ID becomes part of a Temporal task queue, a workflow ID and a NetBox slug, so it is a lower-case DNS
 * label: 1–63 characters of a–z, 0–9 and '-', starting and ending with a letter or digit.
 */
export const SITE_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const SITE_ID_RULE =
  "a lower-case DNS label: 1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit";
export function isSiteId(value: string): boolean {
  return SITE_ID_PATTERN.test(value);
}
