import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createAgentMetrics(registry: Registry) {
  const metrics = {
    intentsDispatched: new Counter({
      name: 'fleet_agent_intents_dispatched_total',
      help: 'Intents turned into Temporal calls',
      labelNames: ['kind'],
      registers: [registry],
    }),
    intentErrors: new Counter({
      name: 'fleet_agent_intent_errors_total',
      help: 'Intent dispatch failures',
      labelNames: ['kind', 'permanent'],
      registers: [registry],
    }),
    temporalCalls: new Counter({
      name: 'fleet_agent_temporal_calls_total',
      help: 'Calls made to Temporal',
      labelNames: ['op'],
      registers: [registry],
    }),
    projectedJobs: new Counter({
      name: 'fleet_agent_projected_jobs_total',
      help: 'Job rows changed by projection',
      registers: [registry],
    }),
    openJobs: new Gauge({
      name: 'fleet_agent_open_jobs',
      help: 'Open jobs counted by the last completed sweep that read every one (queued campaign devices too)',
      registers: [registry],
    }),
    busyCycles: new Counter({
      name: 'fleet_agent_reconcile_busy_cycles_total',
      help: 'Reconcile cycles that had open jobs',
      registers: [registry],
    }),
    reconciledWorkflows: new Counter({
      name: 'fleet_agent_reconciled_workflows_total',
      help: 'Workflow executions read from visibility',
      registers: [registry],
    }),
    startSeconds: new Histogram({
      name: 'fleet_agent_start_seconds',
      help: 'Duration of one workflow start call to Temporal',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    intentWaitSeconds: new Histogram({
      name: 'fleet_agent_intent_wait_seconds',
      help: 'From an intent being recorded to it being dispatched (pickup, input, Temporal call)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    reconcileSeconds: new Histogram({
      name: 'fleet_agent_reconcile_seconds',
      help:
        'Duration of one reconcile cycle, by kind: quick (what started or closed since the last cycle), sweep (a ' +
        'step of the sweep over the open jobs, beside the quick cycles), full (the first cycle, every open job)',
      labelNames: ['kind'],
      registers: [registry],
    }),
    slaOpenBreaches: new Gauge({
      name: 'fleet_agent_sla_open_breaches',
      help: 'Open stuck-state SLA breaches by object type and SLA key (docs/sla.md), as of the last watch pass',
      labelNames: ['object_type', 'sla_key'],
      registers: [registry],
    }),
    slaBreaches: new Counter({
      name: 'fleet_agent_sla_breaches_total',
      help: 'SLA breaches this agent found',
      labelNames: ['object_type', 'sla_key'],
      registers: [registry],
    }),
    slaResolved: new Counter({
      name: 'fleet_agent_sla_resolved_total',
      help: 'SLA breaches this agent resolved (the object moved on, or the limit no longer applies)',
      labelNames: ['object_type', 'sla_key'],
      registers: [registry],
    }),
    slaWatchSeconds: new Histogram({
      name: 'fleet_agent_sla_watch_seconds',
      help: 'Duration of one SLA watch pass (one transaction)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'fleet_agent_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome: delivered, retry (failed, due again), failed (gave up)',
      labelNames: ['webhook', 'outcome'],
      registers: [registry],
    }),
    webhookAttemptSeconds: new Histogram({
      name: 'fleet_agent_webhook_attempt_seconds',
      help: 'Duration of one webhook delivery attempt',
      labelNames: ['webhook'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    satellitePollers: new Gauge({
      name: 'fleet_agent_site_satellite_pollers',
      help: "Pollers Temporal lists on a site's task queue (workflow and activity) at the last liveness check",
      labelNames: ['site_id'],
      registers: [registry],
    }),
    satelliteConnected: new Gauge({
      name: 'fleet_agent_site_satellite_connected',
      help: "1 when a site's satellite polled within the silence limit at the last liveness check (docs/deployment.md)",
      labelNames: ['site_id'],
      registers: [registry],
    }),
    webhookPending: new Gauge({
      name: 'fleet_agent_webhook_pending_deliveries',
      help: 'Webhook deliveries in the outbox not yet delivered (due now or waiting to retry)',
      labelNames: ['webhook'],
      registers: [registry],
    }),
    lookbackSeconds: new Gauge({
      name: 'fleet_agent_projection_lookback_seconds',
      help: "How far quick cycles look back past the last one's start: it follows how late visibility shows closes",
      registers: [registry],
    }),
    sweepFoundEnds: new Counter({
      name: 'fleet_agent_sweep_found_ends_total',
      help: 'Job ends a sweep wrote because no quick cycle had listed them (visibility showed them late)',
      registers: [registry],
    }),
    sweepStepErrors: new Counter({
      name: 'fleet_agent_sweep_step_errors_total',
      help: 'Sweep steps that failed (taken again from the same place by the next sweep); quick cycles go on',
      registers: [registry],
    }),
  };
  // A labelled histogram prints nothing before its first sample: zeroed, an agent whose first cycle never ends still
  // shows a flat series, which FleetProjectionStalled needs.
  for (const kind of ['quick', 'sweep', 'full']) metrics.reconcileSeconds.zero({ kind });
  return metrics;
}
export type AgentMetrics = ReturnType<typeof createAgentMetrics>;
