import { z } from 'zod';
import { burnInTests, defaultFirmwareTimings, defaultNvosInstallTimings } from '@fleet/domain';
import { DatabaseConfig, LogConfig, MetricsConfig, PayloadKeyRingConfig, TemporalConfig } from '@fleet/config';
import { SlaConfig } from './sla-config.js';

const ObserverSettings = z
  .object({
    /** Seconds between the starts of two observation cycles. */
    intervalS: z.number().int().min(1).max(3600),
    /** Devices read at once (the site's Redfish cap still applies). */
    concurrency: z.number().int().min(1).max(2000),
    /** Cycles a faulty reading is delivered for before only its changes are (quarantine rules count observations). */
    confirmations: z.number().int().min(1).max(100),
    /** How long one observeSite run lasts; the history grows by a few events per run. */
    runForS: z.number().int().min(10).max(86_400),
  })
  .strict();
const defaultObserverSettings = { intervalS: 60, concurrency: 100, confirmations: 3, runForS: 3600 };

const ObservationConfig = z
  .object({
    enabled: z.boolean().default(true),
    ...ObserverSettings.partial().shape,
    /** Per-site overrides, by site id; `enabled: false` stops that site's observer. */
    sites: z
      .record(z.string(), ObserverSettings.partial().extend({ enabled: z.boolean().optional() }).strict())
      .default({}),
    /** How often the agent checks that every site's observer runs with its settings. */
    checkEveryS: z.number().int().min(1).max(3600).default(60),
  })
  .strict()
  .default({ enabled: true, sites: {}, checkEveryS: 60 });
export type ObservationConfig = z.infer<typeof ObservationConfig>;

/** The settings of a site's observer, or undefined when it should not run. */
export function observerSettingsFor(config: ObservationConfig, siteId: string) {
  const site = config.sites[siteId] ?? {};
  if (!(site.enabled ?? config.enabled)) return undefined;
  const pick = <K extends keyof typeof defaultObserverSettings>(k: K) =>
    site[k] ?? config[k] ?? defaultObserverSettings[k];
  return {
    siteId,
    intervalS: pick('intervalS'),
    concurrency: pick('concurrency'),
    confirmations: pick('confirmations'),
    runForS: pick('runForS'),
  };
}

/** A sweep that reads every open job, queued campaign devices too, comes at least this often. */
export const fullSweepAtLeastEveryMs = 600_000;

export const AgentConfig = z
  .object({
    log: LogConfig,
    metrics: MetricsConfig,
    database: DatabaseConfig,
    temporal: TemporalConfig.extend({
      /**
       * Temporal payload encryption (docs/security.md): the key rings the sites' satellites hold by reference too,
       * one for every site or one per site. Absent: payloads go to Temporal in clear.
       */
      payloadEncryption: PayloadKeyRingConfig().optional(),
    }),
    dispatch: z
      .object({
        batchSize: z.number().int().min(1).max(1000).default(100),
        idleIntervalMs: z.number().int().min(10).max(60_000).default(500),
        /** Seconds an intent stays leased to this agent while it is being dispatched. */
        leaseS: z.number().int().min(5).max(3600).default(60),
        /** Backoff ceiling for intents Temporal could not take. */
        maxRetryS: z.number().int().min(1).max(3600).default(60),
      })
      .strict()
      .default({ batchSize: 100, idleIntervalMs: 500, leaseS: 60, maxRetryS: 60 }),
    projection: z
      .object({
        /** Jobs per visibility query: one Temporal call per page. */
        pageSize: z.number().int().min(1).max(1000).default(200),
        intervalMs: z.number().int().min(10).max(60_000).default(1000),
        /**
         * Every cycle asks for the workflows started or closed since the last one. Beside the cycles, a sweep of the
         * open jobs (their progress, a visibility query per page) starts every `sweepEvery` intervals, or later when
         * the last one took longer (`sweepMaxDuty`).
         */
        sweepEvery: z.number().int().min(1).max(1000).default(5),
        /**
         * The share of the time sweeps may take: sweeps start `sweepEvery` intervals apart, or further apart when
         * they take long (a pause of at most a minute after one); 1: the next starts as soon as the last ended.
         */
        sweepMaxDuty: z.number().min(0.1).max(1).default(0.5),
        /**
         * Campaign devices still queued (the campaign starts their workflow when it reaches them) are in every
         * `waitingSweepEvery`-th sweep only; a quick cycle lists their workflow once it starts. At 10,000 queued
         * devices they were nearly every page of every sweep, each a visibility query that found nothing. Unset:
         * 10, or fewer where that would space the sweeps of every open job more than 10 minutes apart.
         */
        waitingSweepEvery: z.number().int().min(1).max(1000).optional(),
        /** Ignored (the agent says so at start): sweeps were spread over the quick cycles, now they run beside. */
        sweepPagesPerCycle: z.number().int().min(1).max(1000).optional(),
        /**
         * How far a quick cycle looks back past the last one at least: visibility lag, clock skew (agent vs Temporal).
         * The agent looks further back while it sees visibility show closes later (lookback.ts).
         */
        visibilityLagMs: z.number().int().min(0).max(600_000).default(500),
      })
      .strict()
      // FleetProjectionStalled takes five minutes without a sweep step for a stall.
      .refine((p) => p.sweepEvery * p.intervalMs <= 120_000, {
        message: 'sweepEvery x intervalMs: a sweep at least every 120,000 ms',
        path: ['sweepEvery'],
      })
      // What only a full sweep finds (a queued device's workflow no quick cycle listed) waits at most this long.
      .refine((p) => p.sweepEvery * (p.waitingSweepEvery ?? 1) * p.intervalMs <= fullSweepAtLeastEveryMs, {
        message: 'sweepEvery x waitingSweepEvery x intervalMs: a sweep of every open job at least every 600,000 ms',
        path: ['waitingSweepEvery'],
      })
      .default({ pageSize: 200, intervalMs: 1000, sweepEvery: 5, sweepMaxDuty: 0.5, visibilityLagMs: 500 }),
    power: z
      .object({
        settleTimeoutS: z.number().int().min(1).max(3600).default(600),
        heartbeatTimeoutS: z.number().int().min(1).max(600).default(30),
        startToCloseTimeoutS: z.number().int().min(10).max(86_400).default(1800),
        maximumAttempts: z.number().int().min(1).max(100).default(5),
      })
      .strict()
      .default({ settleTimeoutS: 600, heartbeatTimeoutS: 30, startToCloseTimeoutS: 1800, maximumAttempts: 5 }),
    /**
     * Firmware update timings (defaults: docs/reference/rms-behaviours.md#firmware-timings), in seconds; labs and tests
     * shorten them.
     */
    firmware: z
      .object({
        taskPollS: z.number().min(0.01).max(600).default(defaultFirmwareTimings.taskPollS),
        taskTimeoutS: z.number().min(1).max(86_400).default(defaultFirmwareTimings.taskTimeoutS),
        pushDelayS: z.number().min(0).max(3600).default(defaultFirmwareTimings.pushDelayS),
        powerStateTimeoutS: z.number().min(1).max(3600).default(defaultFirmwareTimings.powerStateTimeoutS),
        acStabilizeS: z.number().min(0).max(3600).default(defaultFirmwareTimings.acStabilizeS),
        bmcRecoveryS: z.number().min(1).max(86_400).default(defaultFirmwareTimings.bmcRecoveryS),
        /** Never more than this share of a rack's switch trays at once (switch issue). */
        maxSwitchShareOfRack: z.number().gt(0).max(1).default(0.34),
        /** A campaign continues as new past this many history events (T4: far below 10,240). */
        campaignHistoryBudget: z.number().int().min(10).max(10_000).default(4_000),
      })
      .strict()
      .default({ ...defaultFirmwareTimings, maxSwitchShareOfRack: 0.34, campaignHistoryBudget: 4_000 }),
    /** NVOS image install timings, in seconds; labs and tests shorten them. */
    nvos: z
      .object({
        pollIntervalS: z.number().min(0.01).max(600).default(defaultNvosInstallTimings.pollIntervalS),
        installTimeoutS: z.number().min(1).max(86_400).default(defaultNvosInstallTimings.installTimeoutS),
        rebootTimeoutS: z.number().min(1).max(86_400).default(defaultNvosInstallTimings.rebootTimeoutS),
      })
      .strict()
      .default(defaultNvosInstallTimings),
    /** Enrolment and burn-in jobs (docs/enrolment.md). */
    enrolment: z
      .object({
        /** The burn-in tests every burn-in runs. */
        burnInTests: z
          .array(z.enum(burnInTests))
          .min(1)
          .default([...burnInTests]),
        /** How long one burn-in run may take, SLURM queue included, before Temporal retries it. */
        burnInTimeoutS: z
          .number()
          .int()
          .min(60)
          .max(7 * 86_400)
          .default(6 * 3600),
        /** The burn-in activity heartbeats every few seconds; this long without one, it is retried elsewhere. */
        burnInHeartbeatTimeoutS: z.number().int().min(5).max(3600).default(60),
      })
      .strict()
      .default({ burnInTests: [...burnInTests], burnInTimeoutS: 6 * 3600, burnInHeartbeatTimeoutS: 60 }),
    /**
     * Remediation jobs (docs/day2.md): how long a playbook step's fix gets to show in the device's health; for
     * `ac_cycle`, how long AC stays off once the tray went dark (the cold-reboot runbook's discharge floor) and how
     * often the tray and shelves are probed meanwhile.
     */
    remediation: z
      .object({
        verifyTimeoutS: z.number().min(1).max(3600).default(300),
        verifyPollS: z.number().min(0.1).max(600).default(10),
        acOffFloorS: z.number().min(0).max(3600).default(180),
        acPollS: z.number().min(0.1).max(600).default(5),
      })
      .strict()
      .default({ verifyTimeoutS: 300, verifyPollS: 10, acOffFloorS: 180, acPollS: 5 }),
    /** Health observation (docs/day2.md): one observer workflow per site, kept running by this agent. */
    observation: ObservationConfig,
    /**
     * Sites (docs/deployment.md, "Sites"): how often the agent asks Temporal for each site's satellite pollers and
     * removes drained sites.
     */
    sites: z
      .object({ checkEveryS: z.number().int().min(1).max(300).default(10) })
      .strict()
      .default({ checkEveryS: 10 }),
    /** Stuck-state SLAs: the limits, and the webhooks a breach escalates to (docs/sla.md). */
    sla: SlaConfig,
  })
  .strict();

/** Which sweeps read the queued campaign devices: every n-th (projection.waitingSweepEvery, or what unset means). */
export function waitingSweepEveryOf(p: { sweepEvery: number; intervalMs: number; waitingSweepEvery?: number }): number {
  return (
    p.waitingSweepEvery ??
    Math.max(1, Math.min(10, Math.floor(fullSweepAtLeastEveryMs / (p.sweepEvery * p.intervalMs))))
  );
}

export type AgentConfig = z.infer<typeof AgentConfig>;

/** Seconds the dispatch and projection cycles get to finish on SIGTERM (deploy/k8s sets the pod's grace above it). */
export const agentShutdownGraceS = 10;
