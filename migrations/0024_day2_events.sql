-- Day-2 objects on the live-update feed (GET /v1/events, docs/day2.md "Events"): a device's health reading changing
-- (`health`, the device's id), an SLA breach opening or resolving (`sla_breach`), a facility event recorded or moving
-- on (`facility_event`) and an RMA case opened, moved or given its vendor case id (`rma`). Quarantine and release are
-- lifecycle moves, `device` events already (0014). Same rules as 0010: deferred constraint triggers run at commit under
-- the advisory lock, so event ids follow commit order. Payloads carry ids and the summary a list or a badge shows,
-- never free text an outside system wrote (fault messages, facility messages): a client reads those from the API.
-- pg_notify refuses payloads over 8000 bytes, which would fail the writer's commit, so lists in them are capped.
CREATE OR REPLACE FUNCTION fleet_record_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_type text;
  event_data jsonb;
  event_id bigint;
  object_id text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('fleet_events', 0));
  IF TG_TABLE_NAME = 'jobs' THEN
    object_id := NEW.id::text;
    event_type := CASE WHEN NEW.kind = 'firmware.campaign' THEN 'campaign' ELSE 'job' END;
    event_data := jsonb_build_object('state', NEW.state, 'kind', NEW.kind, 'parent_id', NEW.parent_id,
      'device_id', NEW.device_id, 'rack_id', NEW.rack_id, 'site_id', NEW.site_id);
  ELSIF TG_TABLE_NAME = 'device_conditions' THEN
    -- A condition belongs to its device: the event is the device's, naming the condition that changed.
    event_type := 'device';
    object_id := NEW.device_id::text;
    event_data := jsonb_build_object('condition', jsonb_build_object('type', NEW.type, 'status', NEW.status,
      'reason', NEW.reason));
  ELSIF TG_TABLE_NAME = 'device_health' THEN
    -- The reading is the device's: its id, as the device's events carry it, and its site for a site's views.
    event_type := 'health';
    object_id := NEW.device_id::text;
    event_data := jsonb_build_object('device_id', NEW.device_id,
      'site_id', (SELECT d.site_id FROM devices d WHERE d.id = NEW.device_id),
      'reachable', NEW.reachable, 'credentials_ok', NEW.credentials_ok, 'power_state', NEW.power_state,
      'fault_count', jsonb_array_length(NEW.faults),
      'faults', (SELECT coalesce(jsonb_agg(jsonb_build_object('class', f->'class', 'component', f->'component',
          'severity', f->'severity')), '[]'::jsonb)
        FROM (SELECT f FROM jsonb_array_elements(NEW.faults) f LIMIT 20) capped),
      'changed_at', NEW.changed_at);
  ELSIF TG_TABLE_NAME = 'sla_breaches' THEN
    event_type := 'sla_breach';
    object_id := NEW.id::text;
    event_data := jsonb_build_object('status', CASE WHEN NEW.resolved_at IS NULL THEN 'open' ELSE 'resolved' END,
      'object_type', NEW.object_type, 'object_id', NEW.object_id, 'object_name', NEW.object_name,
      'site_id', NEW.site_id, 'sla_key', NEW.sla_key, 'state', NEW.state, 'job_kind', NEW.job_kind,
      'limit_s', NEW.limit_s, 'since', NEW.since, 'breached_at', NEW.breached_at, 'resolved_at', NEW.resolved_at,
      'resolution', NEW.resolution);
  ELSIF TG_TABLE_NAME = 'facility_events' THEN
    event_type := 'facility_event';
    object_id := NEW.id::text;
    event_data := jsonb_build_object('state', NEW.state, 'kind', NEW.kind, 'severity', NEW.severity,
      'critical', NEW.critical, 'response', NEW.grading->'response', 'source', NEW.source,
      'rack_count', cardinality(NEW.rack_ids), 'rack_ids', to_jsonb(NEW.rack_ids[1:50]),
      'job_count', cardinality(NEW.job_ids), 'decision', NEW.decision);
  ELSIF TG_TABLE_NAME = 'rma_cases' THEN
    event_type := 'rma';
    object_id := NEW.id::text;
    event_data := jsonb_build_object('state', NEW.state, 'device_id', NEW.device_id, 'site_id', NEW.site_id,
      'failed_part', NEW.failed_part, 'fault_class', NEW.fault_class, 'vendor_case_id', NEW.vendor_case_id,
      'job_id', NEW.job_id, 'opened_by', NEW.opened_by);
  ELSE
    object_id := NEW.id::text;
    event_type := 'device';
    event_data := jsonb_build_object('power_state', NEW.power_state, 'lifecycle_state', NEW.lifecycle_state,
      'lifecycle', NEW.fleet_lifecycle, 'firmware_version', NEW.firmware_version, 'node_type', NEW.node_type,
      'rack_id', NEW.rack_id, 'site_id', NEW.site_id, 'deleted', NEW.deleted_at IS NOT NULL);
  END IF;
  INSERT INTO events (type, object_id, data) VALUES (event_type, object_id, event_data) RETURNING id INTO event_id;
  PERFORM pg_notify('fleet_events', jsonb_build_object('event_id', event_id, 'type', event_type,
    'id', object_id, 'data', event_data)::text);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER device_health_event_insert AFTER INSERT ON device_health DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
-- A repeat of the same reading (a newer observed_at, one more observation) is no event: only what it says.
CREATE CONSTRAINT TRIGGER device_health_event_update AFTER UPDATE ON device_health DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((OLD.reachable, OLD.credentials_ok, OLD.power_state, OLD.faults)
    IS DISTINCT FROM (NEW.reachable, NEW.credentials_ok, NEW.power_state, NEW.faults))
  EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER sla_breaches_event_insert AFTER INSERT ON sla_breaches DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER sla_breaches_event_update AFTER UPDATE ON sla_breaches DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((OLD.resolved_at, OLD.resolution) IS DISTINCT FROM (NEW.resolved_at, NEW.resolution))
  EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER facility_events_event_insert AFTER INSERT ON facility_events DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER facility_events_event_update AFTER UPDATE ON facility_events DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((OLD.state, OLD.job_ids, OLD.decision) IS DISTINCT FROM (NEW.state, NEW.job_ids, NEW.decision))
  EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER rma_cases_event_insert AFTER INSERT ON rma_cases DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION fleet_record_event();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER rma_cases_event_update AFTER UPDATE ON rma_cases DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN ((OLD.state, OLD.vendor_case_id, OLD.job_id) IS DISTINCT FROM (NEW.state, NEW.vendor_case_id, NEW.job_id))
  EXECUTE FUNCTION fleet_record_event();
