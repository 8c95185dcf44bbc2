import type { Db, Job } from '@fleet/db';
import type {
  BmcPasswordRotationInput,
  ColdRebootInput,
  DeviceBmcResetInput,
  DeviceFirmwareUpdateInput,
  DevicePowerInput,
  DevicePowerRefreshInput,
  EnrolmentInput,
  FirmwareCampaignInput,
  RackBmcPasswordRotationInput,
  RackPowerInput,
  RemediationInput,
  SwitchCertificateInstallInput,
  SwitchFactoryResetInput,
  SwitchFirmwareUpdateInput,
  SwitchNvosInstallInput,
  SwitchPasswordRotationInput,
  WorkflowJobKind,
} from '@fleet/domain';
import type { AgentConfig } from '../config.js';

/** What a loader reads: the database and the agent's timings. */
export interface LoaderDeps {
  db: Db;
  config: AgentConfig;
}

/** The input each job kind's workflow takes (the argument type of the workflow of jobKindTable[kind]). */
export interface WorkflowInputs {
  'device.power': DevicePowerInput;
  'device.bmc_reset': DeviceBmcResetInput;
  'device.power_refresh': DevicePowerRefreshInput;
  'rack.power': RackPowerInput;
  'rack.cold_reboot': ColdRebootInput;
  'device.firmware_update': DeviceFirmwareUpdateInput;
  'device.firmware_refresh': DevicePowerRefreshInput;
  'firmware.campaign': FirmwareCampaignInput;
  'switch.nvos_install': SwitchNvosInstallInput;
  'switch.password_rotation': SwitchPasswordRotationInput;
  'switch.factory_reset': SwitchFactoryResetInput;
  'switch.firmware_update': SwitchFirmwareUpdateInput;
  'switch.certificate_install': SwitchCertificateInstallInput;
  'bmc.password_rotation': BmcPasswordRotationInput;
  'rack.bmc_password_rotation': RackBmcPasswordRotationInput;
  'rack.enrol': EnrolmentInput;
  'device.enrol': EnrolmentInput;
  'device.burn_in': EnrolmentInput;
  'device.quarantine': RemediationInput;
  'device.remediate': RemediationInput;
  'device.release': RemediationInput;
  'device.rma_ship': RemediationInput;
  'device.rma_return': RemediationInput;
}

/**
 * Builds a job's workflow input from the inventory as it is now: IDs and references only, never secrets. Throws a
 * PermanentIntentError (a MissingInventoryError for an inventory gap) when the job can never start.
 */
export type InputLoader<K extends WorkflowJobKind> = (deps: LoaderDeps, job: Job) => Promise<WorkflowInputs[K]>;

/** One loader per job kind that starts a workflow: a kind without one does not compile. */
export type InputLoaders = { [K in WorkflowJobKind]: InputLoader<K> };
